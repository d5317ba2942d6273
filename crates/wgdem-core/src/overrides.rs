//! Configurations as data: overrides of an input file's values by dotted key
//! (`materials.quartz.friction = 0.3`), applied to its text before it is parsed, so that they
//! are checked as the file is (an unknown key or a bad value is refused naming it) and the
//! input as run (`input.toml`) records the result.
//!
//! A key names tables by their keys and entries of an array of tables by their `name` (a
//! material, a wall) or by their index from 0 (`particles.0.count`). A key that names no
//! value yet adds it (a default made explicit); the parser refuses one the format does not
//! know.

use crate::error::{Error, Result};

/// One override: a dotted key and the value it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Dotted key (`simulation.seed`, `materials.quartz.friction`, `particles.0.count`).
    pub key: String,
    /// The value, as TOML.
    pub value: toml::Value,
}

impl Override {
    /// `KEY=VALUE` as the command line gives it (`--set`): the value read as a TOML value
    /// (`0.3`, `7`, `true`, `"text"`, `[1, 2, 3]`, `{ distribution = "mono", diameter = 0.002 }`),
    /// or else taken as a string (`--set materials.0.name=quartz`).
    pub fn parse(arg: &str) -> Result<Self> {
        let refuse = |message: String| Error::invalid("--set", arg, message);
        let Some((key, value)) = arg.split_once('=') else {
            return Err(refuse(
                "is not KEY=VALUE; give e.g. --set materials.quartz.friction=0.3".to_owned(),
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(refuse(format!(
                "the key {key:?} is not a dotted key such as simulation.seed"
            )));
        }
        let text = value.trim();
        let value = match toml::from_str::<toml::Table>(&format!("v = {text}")) {
            Ok(mut t) => t
                .remove("v")
                .unwrap_or(toml::Value::String(text.to_owned())),
            Err(_) => toml::Value::String(text.to_owned()),
        };
        Ok(Self {
            key: key.to_owned(),
            value,
        })
    }
}

/// `text` (the TOML of `file`) with `overrides` applied in order, as TOML text again (the
/// comments dropped). A key that runs through a value that is not a table, or names an entry
/// of an array that has none of that name, is refused naming the key and what is there.
pub fn apply(text: &str, file: &str, overrides: &[Override]) -> Result<String> {
    if overrides.is_empty() {
        return Ok(text.to_owned());
    }
    let mut root: toml::Table = toml::from_str(text)
        .map_err(|e| Error::invalid(file, "toml", format!("is not valid TOML: {e}")))?;
    for o in overrides {
        set(&mut root, o).map_err(|message| Error::invalid(file, &o.key, message))?;
    }
    toml::to_string(&root).map_err(|e| Error::invalid(file, "toml", e.to_string()))
}

fn set(root: &mut toml::Table, o: &Override) -> std::result::Result<(), String> {
    let parts: Vec<&str> = o.key.split('.').collect();
    let mut table = root;
    let mut k = 0;
    while k + 1 < parts.len() {
        let here = parts[..=k].join(".");
        let next = table
            .entry(parts[k].to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match next {
            toml::Value::Table(t) => {
                k += 1;
                t
            }
            toml::Value::Array(entries) => {
                if k + 2 >= parts.len() {
                    return Err(format!(
                        "names an entry of `{here}`; name a key inside it (e.g. `{}.friction`)",
                        o.key
                    ));
                }
                let t = entry(entries, parts[k + 1], &here)?;
                k += 2;
                t
            }
            other => {
                return Err(format!(
                    "`{here}` is {}, not a table; the key cannot go through it",
                    other.type_str()
                ));
            }
        };
    }
    table.insert(parts[k].to_owned(), o.value.clone());
    Ok(())
}

/// The table among `entries` that `part` names (its `name`, or its index from 0).
fn entry<'a>(
    entries: &'a mut [toml::Value],
    part: &str,
    here: &str,
) -> std::result::Result<&'a mut toml::Table, String> {
    let names: Vec<String> = entries
        .iter()
        .map(|e| match e.get("name") {
            Some(toml::Value::String(n)) => format!("\"{n}\""),
            _ => "?".to_owned(),
        })
        .collect();
    let at = entries
        .iter()
        .position(|e| matches!(e.get("name"), Some(toml::Value::String(n)) if n == part))
        .or_else(|| part.parse::<usize>().ok().filter(|&i| i < entries.len()));
    let Some(at) = at else {
        return Err(format!(
            "`{here}` has no entry {part:?}; its entries are {} (by name, or by index from 0 to {})",
            names.join(", "),
            entries.len().saturating_sub(1)
        ));
    };
    match &mut entries[at] {
        toml::Value::Table(t) => Ok(t),
        other => Err(format!(
            "`{here}.{part}` is {}, not a table",
            other.type_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
[simulation]
seed = 1
[[materials]]
name = "quartz"
friction = 0.5
[[materials]]
name = "steel"
friction = 0.2
[[particles]]
kind = "random"
count = 300
"#;

    fn applied(sets: &[&str]) -> Result<toml::Table> {
        let o: Vec<Override> = sets
            .iter()
            .map(|s| Override::parse(s))
            .collect::<Result<_>>()?;
        let text = apply(TEXT, "t.toml", &o)?;
        Ok(toml::from_str(&text).expect("TOML again"))
    }

    /// Keys through tables, array entries by name and by index, new keys; the value read as
    /// TOML (a number, a string, an inline table) or else as a string.
    #[test]
    fn overrides_reach_tables_and_named_entries() {
        let t = applied(&[
            "materials.quartz.friction=0.3",
            "particles.0.count = 2000",
            "simulation.seed=7",
            "simulation.dt=1e-6",
            "materials.1.name=iron",
            "particles.0.size={ distribution = \"mono\", diameter = 0.002 }",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t["materials"][0]["friction"].as_float(), Some(0.3));
        assert_eq!(t["materials"][1]["friction"].as_float(), Some(0.2));
        assert_eq!(t["materials"][1]["name"].as_str(), Some("iron"));
        assert_eq!(t["particles"][0]["count"].as_integer(), Some(2000));
        assert_eq!(t["simulation"]["seed"].as_integer(), Some(7));
        assert_eq!(t["simulation"]["dt"].as_float(), Some(1e-6));
        assert_eq!(
            t["particles"][0]["size"]["diameter"].as_float(),
            Some(0.002)
        );
        // f64's extremes go through as the TOML they are (the parser judges them).
        let t = applied(&[
            "simulation.dt=1.7976931348623157e308",
            "simulation.gravity=[0.0, 0.0, -inf]",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t["simulation"]["dt"].as_float(), Some(f64::MAX));
        assert!(
            t["simulation"]["gravity"][2]
                .as_float()
                .is_some_and(f64::is_infinite)
        );
    }

    /// What cannot apply is refused naming the key and what is there.
    #[test]
    fn bad_overrides_name_the_key() {
        let e = applied(&["materials.granite.friction=0.3"])
            .expect_err("no granite")
            .to_string();
        assert!(
            e.contains("`materials.granite.friction`") && e.contains("\"quartz\", \"steel\""),
            "{e}"
        );
        let e = applied(&["materials.quartz=0.3"])
            .expect_err("an entry")
            .to_string();
        assert!(e.contains("name a key inside it"), "{e}");
        let e = applied(&["simulation.seed.x=1"])
            .expect_err("through a number")
            .to_string();
        assert!(e.contains("`simulation.seed` is integer"), "{e}");
        let e = Override::parse("simulation.seed")
            .expect_err("no =")
            .to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
        let e = Override::parse("simulation..seed=1")
            .expect_err("empty part")
            .to_string();
        assert!(e.contains("not a dotted key"), "{e}");
        let e = applied(&["particles.3.count=1"])
            .expect_err("index")
            .to_string();
        assert!(e.contains("index from 0 to 0"), "{e}");
    }
}
