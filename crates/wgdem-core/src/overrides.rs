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

/// The inputs a set of overrides may apply to: what [`check_keys`] parses them as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A shear configuration (`wgdem shear`).
    Shear,
    /// A scene (`wgdem run`).
    Scene,
    /// A contact case (`wgdem contact`).
    ContactCase,
}

/// Whether every key of `overrides` names a key that `input`'s format knows, each applied alone
/// to `text` (which must itself parse): one that cannot apply, or that the parser finds no
/// such field for, is refused naming the key. Values are not judged here (a sweep reports a
/// bad value as that member's failure; the run refuses it naming the key): only what makes
/// every member with that key fail alike.
pub fn check_keys(text: &str, file: &str, input: Input, overrides: &[Override]) -> Result<()> {
    let parse = |text: &str| -> Result<()> {
        match input {
            Input::Shear => {
                crate::scene::parse_toml::<crate::shear::ShearConfig>(text, file).map(drop)
            }
            Input::Scene => crate::scene::SceneConfig::parse(text, file).map(drop),
            Input::ContactCase => {
                crate::scene::parse_toml::<crate::contact_case::CaseConfig>(text, file).map(drop)
            }
        }
    };
    parse(text)?;
    for o in overrides {
        let applied = apply(text, file, std::slice::from_ref(o))?;
        match parse(&applied) {
            Err(e @ Error::Parse { .. }) if is_unknown_key(&e) => {
                return Err(Error::invalid(
                    file,
                    &o.key,
                    format!("is not a key of this file: {e}"),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether a parse error is the parser's "unknown field" (serde's wording for a key that
/// `deny_unknown_fields` refuses).
fn is_unknown_key(e: &Error) -> bool {
    matches!(e, Error::Parse { message, .. } if message.starts_with("unknown field"))
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

    /// A key the format does not know is refused by `check_keys`, naming it; a bad value of a
    /// known key is left to the run (which refuses it naming the key).
    #[test]
    fn check_keys_refuses_unknown_keys_and_leaves_values() {
        let scene = "[simulation]\nduration = 0.1\noutput_interval = 0.01\n[contact]\nlaw = \"hertz\"\nhistory = \"true\"\n[[materials]]\nname = \"glass\"\ndensity = 2500.0\nfriction = 0.3\nyoung_modulus = 1e7\npoisson_ratio = 0.25\nrestitution = 0.5\n";
        let set = |s: &str| vec![Override::parse(s).unwrap_or_else(|e| panic!("{e}"))];
        let check = |s: &str| check_keys(scene, "s.toml", Input::Scene, &set(s));
        assert!(check("materials.glass.friction=0.4").is_ok());
        assert!(
            check("simulation.seed=7").is_ok(),
            "a default made explicit"
        );
        assert!(
            check("materials.glass.friction=-1").is_ok(),
            "a value: the run's to refuse"
        );
        assert!(
            check("simulation.seed=\"abc\"").is_ok(),
            "a type: the run's to refuse"
        );
        let e = check("materials.glass.frictoin=0.4")
            .expect_err("typo")
            .to_string();
        assert!(
            e.contains("`materials.glass.frictoin`: is not a key") && e.contains("unknown field"),
            "{e}"
        );
        let e = check("materials.sand.friction=0.4")
            .expect_err("no sand")
            .to_string();
        assert!(e.contains("has no entry \"sand\""), "{e}");
        let e = check_keys(scene, "s.toml", Input::Shear, &[])
            .expect_err("a scene is not a shear config")
            .to_string();
        assert!(e.contains("s.toml"), "{e}");
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
