from semverlite import compare, max_version, parse, sort_versions


def test_two_digit_minor():
    assert max_version(["1.9.0", "1.10.0"]) == parse("1.10.0")


def test_two_digit_patch():
    assert compare("2.0.10", "2.0.9") == 1


def test_sort_numeric():
    got = [str(v) for v in sort_versions(["10.0.0", "9.1.0", "1.0.0-rc1", "1.0.0"])]
    assert got == ["1.0.0-rc1", "1.0.0", "9.1.0", "10.0.0"]


def test_prerelease_before_release():
    assert max_version(["1.0.0-rc2", "1.0.0-rc1"]) == parse("1.0.0-rc2")


def test_single_digit_order():
    assert compare("1.2.3", "1.2.4") == -1
