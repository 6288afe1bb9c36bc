"""For instructors: write the student release of the course (the lesson notebooks with their
exercise cells marked as nbgrader marks them, no solution text) and a grading script.

    python -m workbench course --release DIR

The notebooks in ``notebooks/course/`` already hold only stubs; an exercise's answer cell
carries the cell metadata ``{"course": {"exercise": NAME, "role": "answer"}}`` and its check
cell ``{"course": {"exercise": NAME, "role": "check"}}``. The release adds nbgrader's
metadata (answer cells: ``solution: true``; check cells: ``grade: true`` with one point, a
``locked`` autograder test that asserts ``check(...).correct``), so nbgrader's autograde
grades them, and writes ``grade.py`` that executes completed notebooks and prints a table.
Each answer cell's last ``pass`` is wrapped in nbgrader's solution delimiters, and the
release's ``nbgrader_config.py`` makes ``nbgrader generate_assignment`` put ``pass`` back, so
the student version nbgrader writes keeps the stub.
"""
from __future__ import annotations

import json
from pathlib import Path

from .lessons import EXERCISES

COURSE_DIR = Path(__file__).resolve().parents[2] / "notebooks" / "course"

GRADE_SCRIPT = '''"""Grade completed course notebooks: python grade.py NOTEBOOK.ipynb [...]
Runs each notebook top to bottom, then checks every exercise answered in it with
workbench.course.check; prints one line per exercise and the total."""
import json
import sys

import nbformat
from nbclient import NotebookClient


def grade(path):
    nb = nbformat.read(path, as_version=4)
    names = [c.metadata["course"]["exercise"] for c in nb.cells
             if c.metadata.get("course", {}).get("role") == "answer"]
    probe = nbformat.v4.new_code_cell(
        "from workbench.course import check as _check\\n"
        "_results = {n: _check(n, globals()[n], speed=False).correct for n in %r}\\n"
        "import json as _json\\nprint('GRADES', _json.dumps(_results))" % (names,))
    nb.cells.append(probe)
    NotebookClient(nb, timeout=600, allow_errors=True).execute()
    for out in probe.outputs:
        text = out.get("text", "")
        if text.startswith("GRADES"):
            return json.loads(text[len("GRADES "):])
    return {n: False for n in names}


if __name__ == "__main__":
    total = earned = 0
    for path in sys.argv[1:]:
        for name, ok in grade(path).items():
            total += 1
            earned += ok
            print(f"{path}: {name}: {'pass' if ok else 'fail'}")
    print(f"{earned} / {total}")
'''


def nbgrader_cell(cell: dict) -> dict:
    """``cell`` with nbgrader's metadata added from its ``course`` metadata (a new dict)."""
    course = cell.get("metadata", {}).get("course")
    if not course:
        return cell
    out = json.loads(json.dumps(cell))
    name, role = course["exercise"], course["role"]
    if role == "answer":
        out["source"] = solution_region("".join(out["source"]) if isinstance(out["source"], list)
                                        else out["source"])
        out["metadata"]["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                       "grade_id": f"{name}-answer", "schema_version": 3}
    elif role == "check":
        out["metadata"]["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                       "points": 1, "grade_id": f"{name}-check",
                                       "schema_version": 3}
        out["source"] = (f"report = check({name!r}, {name})\nreport\n"
                         f"assert report.correct, str(report)\n")
    return out


NBGRADER_CONFIG = '''c = get_config()  # noqa: F821 - nbgrader's config object
# The student's cell keeps the stub: nbgrader replaces the solution region (the stub's last
# `pass`) with this text, indented as the region was.
c.ClearSolutions.code_stub = {"python": "pass"}
'''


def solution_region(stub: str) -> str:
    """``stub`` with its last ``pass`` line wrapped in nbgrader's solution delimiters
    (``### BEGIN SOLUTION`` / ``### END SOLUTION``), so that ``nbgrader generate_assignment``
    replaces only that line (by ``pass``, from the release's ``nbgrader_config.py``) and the
    student keeps the rest of the stub; unchanged when the stub has no ``pass`` line."""
    lines = stub.rstrip("\n").split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == "pass":
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            lines[i:i + 1] = [f"{indent}### BEGIN SOLUTION", lines[i], f"{indent}### END SOLUTION"]
            break
    return "\n".join(lines) + "\n"


def solution_lines() -> list:
    """The longer body lines of every good solution (none may appear in an answer cell)."""
    out = []
    for ex in EXERCISES.values():
        body = ex.solution_source().splitlines()[2:]      # past the decorator and def line
        out += [line.strip() for line in body if len(line.strip()) > 25]
    return out


def solution_bodies() -> list:
    """Every good solution's body, whitespace-normalised (none may appear anywhere)."""
    return [" ".join(" ".join(ex.solution_source().splitlines()[2:]).split())
            for ex in EXERCISES.values()]


def leaks(nb: dict) -> list:
    """Solution text found in notebook ``nb`` (a dict in nbformat 4): solution lines in its
    answer cells, and whole solution bodies anywhere."""
    found = []
    lines = solution_lines()
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell.get("metadata", {}).get("course", {}).get("role") == "answer":
            found += [line for line in lines if line in src]
        flat = " ".join(src.split())
        found += [body[:60] for body in solution_bodies() if body and body in flat]
    return found


def release(dest: Path, source: Path = COURSE_DIR) -> list:
    """Write the student release into ``dest`` (created): each lesson notebook with nbgrader
    metadata, ``grade.py`` and ``nbgrader_config.py`` (for ``nbgrader generate_assignment``).
    Returns the written paths. Raises ValueError when a solution's
    line would appear in a written notebook (the release must not give answers away)."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for nb_path in sorted(source.glob("*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        nb["cells"] = [nbgrader_cell(c) for c in nb["cells"]]
        for c in nb["cells"]:
            if c["cell_type"] == "code":
                c.update(outputs=[], execution_count=None)
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
        leaked = leaks(nb)
        if leaked:
            raise ValueError(f"{nb_path.name} contains solution text: {leaked[0]!r}")
        out = dest / nb_path.name
        out.write_text(text, encoding="utf-8")
        written.append(out)
    grade = dest / "grade.py"
    grade.write_text(GRADE_SCRIPT, encoding="utf-8")
    config = dest / "nbgrader_config.py"
    config.write_text(NBGRADER_CONFIG, encoding="utf-8")
    written += [grade, config]
    return written
