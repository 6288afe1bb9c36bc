"""Tile Workbench."""
