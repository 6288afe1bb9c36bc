from tests.filecheck_util import check, run_filecheck


def test_filecheck_passes_and_fails():
    text = "a = 1\nb = 2\nc = 3\n"
    check(text, "CHECK: a = 1\nCHECK-NEXT: b = 2\nCHECK-NOT: d\n")
    code, msg = run_filecheck(text, "CHECK: a = 1\nCHECK-NEXT: c = 3\n")
    assert code != 0 and "c = 3" in msg
