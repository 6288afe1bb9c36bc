"""``workbench.testing.perf_report`` / ``Benchmark`` (Triton's names): every (x, line) pair is
called with the fixed args, the first number of a tuple is kept, the table prints and saves."""
import csv
import random

from workbench.testing import Benchmark, perf_report


def test_perf_report_fills_prints_and_saves_the_table(tmp_path, capsys):
    scale = {"one": 1.0, "two": 2.0}
    offset = random.randint(1, 100)
    calls = []

    @perf_report(Benchmark(x_names=["n"], x_vals=[3, 5, 8], line_arg="provider",
                           line_vals=["one", "two"], line_names=["One", "Two"],
                           plot_name="scaled", args={"offset": offset}, ylabel="ms"))
    def bench(n, provider, offset):
        calls.append((n, provider))
        value = n * scale[provider] + offset
        return value, value - 1, value + 1  # (mean, min, max): the table keeps the mean

    rows = bench.run(print_data=True, save_path=str(tmp_path), return_df=False)
    assert rows is None
    assert calls == [(n, p) for n in (3, 5, 8) for p in ("one", "two")]
    printed = capsys.readouterr().out
    assert "scaled:" in printed and f"{8 * 2.0 + offset:.4g}" in printed.split()
    with open(tmp_path / "scaled.csv") as f:
        table = list(csv.DictReader(f))
    assert [int(r["n"]) for r in table] == [3, 5, 8]
    assert [float(r["Two"]) for r in table] == [n * 2.0 + offset for n in (3, 5, 8)]
    df = bench.run(return_df=True)
    first = df[0] if isinstance(df, list) else df.iloc[0].to_dict()
    assert first["One"] == 3 + offset
