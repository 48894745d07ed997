"""load_csv: what one record is, header handling, and errors that name file, line and column."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpsubmod.datasets import CSVDataset, load_csv
from dpsubmod.errors import DPSubmodError, ValidationError


def write(tmp_path, text, name="data.csv", encoding="utf-8"):
    p = tmp_path / name
    p.write_text(text, encoding=encoding)
    return p


def test_header_label_and_text_columns(tmp_path):
    p = write(tmp_path, "id,age,income,bought\nann,34,52.5,1\nbob,51,61,0\ncy,29,40.25,1\n")
    d = load_csv(p, label_column="bought", text_columns=["id"])
    assert isinstance(d, CSVDataset)
    assert d.X.shape == (3, 2) and d.X.dtype == np.float64
    assert d.feature_names == ("age", "income") and d.label_name == "bought"
    np.testing.assert_array_equal(d.X[:, 1], [52.5, 61.0, 40.25])
    np.testing.assert_array_equal(d.y, [1.0, 0.0, 1.0])
    assert d.text == {"id": ("ann", "bob", "cy")}
    assert d.n_records == 3 and d.has_header
    assert d.columns == ("id", "age", "income", "bought")
    assert d.line_numbers.tolist() == [2, 3, 4] and d.line_of(2) == 4
    # the privacy unit is stated: one row of the file
    assert "one row" in d.record and "data.csv" in d.record
    assert d.source == str(p)


def test_columns_select_and_order_and_ignore_the_rest(tmp_path):
    # an unselected column may hold anything: it is not read as numbers
    p = write(tmp_path, "a,b,comment,c\n1,2,hello,3\n4,5,,6\n")
    d = load_csv(p, columns=["c", "a"])
    assert d.feature_names == ("c", "a")
    np.testing.assert_array_equal(d.X, [[3, 1], [6, 4]])
    d2 = load_csv(p, columns=[3, 0])
    np.testing.assert_array_equal(d2.X, d.X)


def test_headerless_files(tmp_path):
    p = write(tmp_path, "1,2\n3,4\n")
    auto = load_csv(p)
    assert not auto.has_header and auto.feature_names == ("col1", "col2")
    assert auto.X.shape == (2, 2) and auto.line_numbers.tolist() == [1, 2]
    forced = load_csv(p, header=True)
    assert forced.feature_names == ("1", "2") and forced.X.tolist() == [[3.0, 4.0]]
    q = write(tmp_path, "5,y\n1,2\n", name="h.csv")
    d = load_csv(q, header=False, columns=["col1"], text_columns=["col2"])
    assert d.X[:, 0].tolist() == [5.0, 1.0] and d.text["col2"] == ("y", "2")
    # "auto" reads a line with a non-number as the header
    assert load_csv(q, columns=["5"]).X.tolist() == [[1.0]]


def test_bom_quotes_blank_lines_and_other_delimiters(tmp_path):
    p = write(tmp_path, '\ufeff"a","b"\n\n 1 ,"2.5"\n\n3,4\n')
    d = load_csv(p)
    assert d.feature_names == ("a", "b")
    np.testing.assert_array_equal(d.X, [[1, 2.5], [3, 4]])
    assert d.line_numbers.tolist() == [3, 5]
    q = write(tmp_path, "a;b\n1;2\n", name="semi.csv")
    assert load_csv(q, delimiter=";").X.tolist() == [[1.0, 2.0]]


def test_custom_record_statement(tmp_path):
    p = write(tmp_path, "a\n1\n")
    assert load_csv(p, record="one household").record == "one household"


@pytest.mark.parametrize("text,kwargs,needles", [
    ("", {}, ["empty"]),
    ("\n\n", {}, ["empty"]),
    ("a,b\n", {}, ["no data rows"]),
    ("a,b\n1,2\n3,x7\n", {}, ["line 3", "'b'", "'x7'", "not a number"]),
    ("a,b\n1,2\n,4\n", {}, ["line 3", "'a'", "empty"]),
    ("a,b\n1,nan\n", {}, ["line 2", "'b'", "not finite", "impute"]),
    ("a,b\n1,2\n\n-inf,2\n", {}, ["line 4", "'a'", "not finite"]),
    ("a,b\n1,2\n3,4,5\n", {}, ["line 3", "3 cells", "2"]),
    ("a,a\n1,2\n", {}, ["line 1", "'a'", "twice"]),
    ("a,\n1,2\n", {}, ["line 1", "empty", "header"]),
    ("a,b\n1,2\n", {"label_column": "y"}, ["no column named 'y'", "a, b"]),
    ("a,b\n1,2\n", {"columns": ["a", "z"]}, ["no column named 'z'"]),
    ("a,b\n1,2\n", {"columns": [5]}, ["position 5"]),
    ("a,b\n1,2\n", {"columns": ["a"], "label_column": "a"}, ["label", "'a'"]),
    ("a,b\n1,yes\n", {"label_column": "b"}, ["line 2", "'b'", "'yes'"]),
    ("a,b\n1,2\n", {"header": "maybe"}, ["'header'"]),
    ("a,b\n1,2\n", {"delimiter": ";;"}, ["'delimiter'"]),
    ('a,b\n1,"2\n', {}, ["malformed"]),
])
def test_bad_files_name_file_line_and_column(tmp_path, text, kwargs, needles):
    p = write(tmp_path, text)
    with pytest.raises(ValidationError) as err:
        load_csv(p, **kwargs)
    msg = str(err.value)
    assert "\n" not in msg
    for needle in needles:
        assert needle in msg, (needle, msg)
    if "line" in needles[0]:
        assert "data.csv" in msg


def test_missing_directory_and_non_utf8_files(tmp_path):
    with pytest.raises(DPSubmodError, match="not found"):
        load_csv(tmp_path / "nope.csv")
    with pytest.raises(DPSubmodError, match="directory"):
        load_csv(tmp_path)
    p = tmp_path / "latin.csv"
    p.write_bytes("a\n\xe9\n".encode("latin-1"))
    with pytest.raises(DPSubmodError, match="UTF-8"):
        load_csv(p)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 4)),
              elements=st.floats(allow_nan=False, allow_infinity=False, width=64)))
def test_round_trip_of_finite_values(tmp_path_factory, X):
    tmp = tmp_path_factory.mktemp("rt")
    names = [f"c{j}" for j in range(X.shape[1])]
    lines = [",".join(names)] + [",".join(repr(float(v)) for v in row) for row in X]
    p = tmp / "x.csv"
    p.write_text("\n".join(lines) + "\n")
    d = load_csv(p)
    np.testing.assert_array_equal(d.X, X)
    assert d.feature_names == tuple(names)
