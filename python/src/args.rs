//! Arguments from Python as the engine takes them: vectors and arrays of any numeric dtype or
//! nested lists, boxes, walls and materials by index or name, each refused with a
//! `ConfigError` naming the argument.

use glam::DVec3;
use numpy::{AllowTypeChange, PyArrayLike1, PyArrayLike2};
use pyo3::prelude::*;

use crate::errors::bad_argument;
use crate::session::Session;

/// Reads an `(n, 3)` float64 array argument, refusing another shape or non-finite values.
pub(crate) fn vectors(
    what: &str,
    field: &str,
    array: &PyArrayLike2<'_, f64, AllowTypeChange>,
    n: usize,
) -> PyResult<Vec<DVec3>> {
    let a = array.as_array();
    if a.shape() != [n, 3] {
        return Err(bad_argument(
            what,
            field,
            format!(
                "has shape {:?}; it must be ({n}, 3), one row per sphere",
                a.shape()
            ),
        ));
    }
    let rows: Vec<DVec3> = a
        .rows()
        .into_iter()
        .map(|r| DVec3::new(r[0], r[1], r[2]))
        .collect();
    if let Some(i) = rows.iter().position(|v| !v.is_finite()) {
        return Err(bad_argument(
            what,
            field,
            format!("row {i} is not finite ({})", rows[i]),
        ));
    }
    Ok(rows)
}

/// A 3-vector argument (a list, tuple or array of numbers), refusing another length or
/// non-finite values; `unit` names its unit in the message.
pub(crate) fn vector(
    what: &str,
    field: &str,
    array: &PyArrayLike1<'_, f64, AllowTypeChange>,
    unit: &str,
) -> PyResult<DVec3> {
    let a = array.as_array();
    if a.len() != 3 || !a.iter().all(|x| x.is_finite()) {
        return Err(bad_argument(
            what,
            field,
            format!("{a} must be 3 finite numbers ({unit})"),
        ));
    }
    Ok(DVec3::new(a[0], a[1], a[2]))
}

/// A box argument `[[x0, y0, z0], [x1, y1, z1]]` (m) as its corners, refusing another shape,
/// non-finite values or an empty box.
pub(crate) fn box_corners(
    what: &str,
    array: &PyArrayLike2<'_, f64, AllowTypeChange>,
) -> PyResult<(DVec3, DVec3)> {
    let a = array.as_array();
    let refuse = |why: String| bad_argument(what, "box", why);
    if a.shape() != [2, 3] || !a.iter().all(|x| x.is_finite()) {
        return Err(refuse(format!(
            "{a} must be two corners of 3 finite numbers each, [[x0, y0, z0], [x1, y1, z1]] (m)"
        )));
    }
    let lo = DVec3::new(a[[0, 0]], a[[0, 1]], a[[0, 2]]);
    let hi = DVec3::new(a[[1, 0]], a[[1, 1]], a[[1, 2]]);
    if !hi.cmpgt(lo).all() {
        return Err(refuse(format!(
            "the second corner {hi} must exceed the first {lo} along every axis"
        )));
    }
    Ok((lo, hi))
}

/// A wall argument: its index in the scene, or its name.
#[derive(FromPyObject)]
pub(crate) enum WallRef {
    Index(i64),
    Name(String),
}

/// A material argument: its index into `Scene.materials`, or its name.
#[derive(FromPyObject)]
pub(crate) enum MaterialRef {
    Index(i64),
    Name(String),
}

/// `wall` as an index into `session`'s walls, or a `ConfigError` naming `what`.
pub(crate) fn wall_index(session: &Session, what: &str, wall: &WallRef) -> PyResult<usize> {
    let walls = &session.sim.walls;
    let n = walls.len();
    let names = || {
        walls
            .iter()
            .map(|w| format!("\"{}\"", w.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match wall {
        WallRef::Index(i) => match usize::try_from(*i) {
            Ok(w) if w < n => Ok(w),
            _ => Err(bad_argument(
                what,
                "wall",
                format!(
                    "{i} is not a wall index; the scene has {n} wall(s), indices 0 to {} (or their names: {})",
                    n.saturating_sub(1),
                    names()
                ),
            )),
        },
        WallRef::Name(name) => walls.iter().position(|w| &w.name == name).ok_or_else(|| {
            bad_argument(
                what,
                "wall",
                format!(
                    "\"{name}\" is not a wall of the scene; its walls are {}",
                    names()
                ),
            )
        }),
    }
}

/// `material` as an index into the scene's materials, or a `ConfigError` naming `field`.
pub(crate) fn material_index(
    session: &Session,
    what: &str,
    field: &str,
    material: &MaterialRef,
) -> PyResult<usize> {
    let names = &session.looks.names;
    let known = || {
        names
            .iter()
            .map(|m| format!("\"{m}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match material {
        MaterialRef::Index(i) => usize::try_from(*i)
            .ok()
            .filter(|&m| m < names.len())
            .ok_or_else(|| {
                bad_argument(
                    what,
                    field,
                    format!(
                        "{i} is not a material index; the scene's materials are {} (indices from 0)",
                        known()
                    ),
                )
            }),
        MaterialRef::Name(name) => names.iter().position(|m| m == name).ok_or_else(|| {
            bad_argument(
                what,
                field,
                format!("\"{name}\" is not a material of the scene; its materials are {}", known()),
            )
        }),
    }
}

/// `overrides` (a dict of dotted key → value: a number, bool, str, list or dict) as the
/// engine's overrides (`wgdem_core::overrides`), in the dict's order.
pub(crate) fn overrides(
    what: &str,
    overrides: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Vec<wgdem_core::overrides::Override>> {
    let Some(dict) = overrides else {
        return Ok(Vec::new());
    };
    dict.iter()
        .map(|(key, value)| {
            let key: String = key.extract().map_err(|_| {
                bad_argument(what, "overrides", format!("the key {key} is not a str"))
            })?;
            let value = toml_value(&value).ok_or_else(|| {
                bad_argument(
                    what,
                    "overrides",
                    format!(
                        "{key}: {value} is not a number, bool, str, list or dict (what TOML holds)"
                    ),
                )
            })?;
            Ok(wgdem_core::overrides::Override { key, value })
        })
        .collect()
}

/// A Python value as TOML: bool, int, float, str, list or tuple, dict.
fn toml_value(v: &Bound<'_, PyAny>) -> Option<toml::Value> {
    use pyo3::types::{PyBool, PyDict, PyList, PyTuple};
    if v.is_instance_of::<PyBool>() {
        return v.extract::<bool>().ok().map(toml::Value::Boolean);
    }
    if let Ok(i) = v.extract::<i64>() {
        return Some(toml::Value::Integer(i));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Some(toml::Value::Float(x));
    }
    if let Ok(s) = v.extract::<String>() {
        return Some(toml::Value::String(s));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Option<Vec<_>> = v.try_iter().ok()?.map(|x| toml_value(&x.ok()?)).collect();
        return items.map(toml::Value::Array);
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            t.insert(k.extract::<String>().ok()?, toml_value(&x)?);
        }
        return Some(toml::Value::Table(t));
    }
    None
}
