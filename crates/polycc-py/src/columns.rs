//! Time-series columns handed to Python as bytes, one copy each, instead of a Python object
//! per value (a float in a list takes 32 bytes, 8 here; 50 flows for 600 s are 300 000 rows).
//!
//! A table is a dict {column name: value}: a numeric column is `bytes` of little-endian `f64`
//! with NaN for null (`numpy.frombuffer(b, "<f8")`); a string column is a tuple
//! `(levels, codes)`, its distinct values (list of str) and `bytes` of little-endian `i32`
//! codes into them, -1 for null (pandas' `Categorical.from_codes` and Arrow's dictionary
//! arrays take them as they are). `polycc.columns` decodes them.

use polycc_sim::{Column, StrColumn, Table};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

/// `values` as bytes of `width`-byte little-endian numbers, written straight into the Python
/// object.
fn bytes_of<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |buf| {
        for (chunk, &v) in buf.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to_le(v));
        }
        Ok(())
    })
}

fn str_column<'py>(py: Python<'py>, col: &StrColumn) -> PyResult<Bound<'py, PyTuple>> {
    let codes: Vec<i32> = col
        .codes()
        .iter()
        .map(|&c| {
            if c == StrColumn::NULL {
                -1
            } else {
                i32::try_from(c).expect("fewer than 2^31 distinct values")
            }
        })
        .collect();
    let codes = bytes_of(py, &codes, i32::to_le_bytes)?;
    PyTuple::new(
        py,
        [col.levels().into_pyobject(py)?.into_any(), codes.into_any()],
    )
}

/// A table as a dict of encoded columns (see the module documentation).
pub fn table_to_dict<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, column) in &table.columns {
        match column {
            Column::F64(values) => dict.set_item(name, bytes_of(py, values, f64::to_le_bytes)?)?,
            Column::Str(values) => dict.set_item(name, str_column(py, values)?)?,
        }
    }
    Ok(dict)
}
