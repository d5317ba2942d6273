//! Range checks of scene values that produce [`Error::Invalid`] naming the file and field.

use super::*;
use crate::contact::rolling::Rolling;

/// Range checks that produce [`Error::Invalid`] naming the field.
pub(crate) struct Validator<'a> {
    pub(crate) file: &'a str,
}

impl Validator<'_> {
    pub(crate) fn err(&self, field: &str, message: String) -> Error {
        Error::invalid(self.file, field, message)
    }

    /// Refuses an `[output] checkpoint_seconds` that is not a finite number of seconds ≥ 0
    /// ([`crate::checkpoint::Pace`]).
    pub(crate) fn checkpoint_seconds(&self, seconds: f64) -> Result<()> {
        if seconds.is_finite() && seconds >= 0.0 {
            Ok(())
        } else {
            Err(self.err(
                "output.checkpoint_seconds",
                format!(
                    "{seconds} must be a number of seconds ≥ 0 (the least wall-clock time between checkpoints; 0 takes one every checkpoint_rows rows)"
                ),
            ))
        }
    }

    pub(crate) fn positive(&self, field: &str, x: f64, unit: &str) -> Result<()> {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(self.err(field, format!("{x} must be a positive number (in {unit})")))
        }
    }

    pub(super) fn finite3(&self, field: &str, x: [f64; 3]) -> Result<()> {
        if x.iter().all(|c| c.is_finite()) {
            Ok(())
        } else {
            Err(self.err(field, format!("{x:?} has a non-finite component")))
        }
    }

    pub(super) fn unit(&self, field: &str, x: [f64; 3]) -> Result<DVec3> {
        self.finite3(field, x)?;
        DVec3::from_array(x)
            .try_normalize()
            .ok_or_else(|| self.err(field, "is the zero vector; give a direction".to_owned()))
    }

    pub(super) fn inside_walls(&self, field: &str, x: DVec3, walls: &[Wall]) -> Result<()> {
        for w in walls {
            if let Some(d) = w.signed_distance(x)
                && d < 0.0
            {
                return Err(self.err(
                        field,
                        format!(
                            "point ({:.6}, {:.6}, {:.6}) m lies outside wall \"{}\" ({:.3e} m behind it); move it to the side the wall's normal points to",
                            x.x, x.y, x.z, w.name, -d
                        ),
                    ));
            }
        }
        Ok(())
    }

    /// Applies `[[contact.pairs]]` to the pair table, refusing what a model cannot do.
    pub(super) fn pair_models(
        &self,
        configs: &[PairConfig],
        materials: &[Material],
        lookup: &dyn Fn(String, &str) -> Result<usize>,
        wall_materials: &HashSet<usize>,
        particle_materials: &HashSet<usize>,
        table: &mut [PairParams],
    ) -> Result<()> {
        let n = materials.len();
        let mut seen = HashSet::new();
        for (k, c) in configs.iter().enumerate() {
            let f = |name: &str| format!("contact.pairs[{k}].{name}");
            let a = lookup(f("materials[0]"), &c.materials[0])?;
            let b = lookup(f("materials[1]"), &c.materials[1])?;
            if !seen.insert((a.min(b), a.max(b))) {
                return Err(self.err(
                    &f("materials"),
                    format!(
                        "the pair (\"{}\", \"{}\") is listed twice; give each pair one model",
                        c.materials[0], c.materials[1]
                    ),
                ));
            }
            let name = match c.model {
                PairModelName::Spring => "spring",
                PairModelName::Linear => "linear",
                PairModelName::Hill => "hill",
                PairModelName::Jager => "jager",
            };
            // Keys that belong to another model are refused rather than ignored.
            let keys = [
                ("kn", c.kn.is_some(), PairModelName::Linear),
                ("kt", c.kt.is_some(), PairModelName::Linear),
                (
                    "effective_modulus",
                    c.effective_modulus.is_some(),
                    PairModelName::Linear,
                ),
                (
                    "stiffness_ratio",
                    c.stiffness_ratio.is_some(),
                    PairModelName::Linear,
                ),
                ("twirl", c.twirl.is_some(), PairModelName::Linear),
                ("refined", c.refined.is_some(), PairModelName::Linear),
                (
                    "damping_constant",
                    c.damping_constant.is_some(),
                    PairModelName::Hill,
                ),
                ("suction", c.suction.is_some(), PairModelName::Hill),
                ("dp_max", c.dp_max.is_some(), PairModelName::Jager),
                ("capacity", c.capacity.is_some(), PairModelName::Jager),
            ];
            if let Some((key, _, owner)) = keys
                .iter()
                .find(|(_, set, owner)| *set && *owner != c.model)
            {
                return Err(self.err(
                    &f(key),
                    format!(
                        "belongs to model = \"{}\", not \"{name}\"; remove it",
                        format!("{owner:?}").to_lowercase()
                    ),
                ));
            }
            let touches_wall = (wall_materials.contains(&a) && particle_materials.contains(&b))
                || (wall_materials.contains(&b) && particle_materials.contains(&a));
            let elastic = |m: usize| {
                match materials[m].stiffness {
                Stiffness::Elastic {
                    young_modulus,
                    poisson_ratio,
                    ..
                } => Ok((young_modulus, poisson_ratio)),
                Stiffness::Direct { .. } => Err(self.err(
                    &f("model"),
                    format!(
                        "the {name} model needs elastic constants; give material \"{}\" young_modulus, poisson_ratio and restitution",
                        materials[m].name
                    ),
                )),
            }
            };
            let model = match c.model {
                PairModelName::Spring => PairModel::Spring,
                PairModelName::Linear => {
                    let stiffness = match (c.effective_modulus, c.kn, c.kt) {
                        (Some(e), None, None) => {
                            self.positive(&f("effective_modulus"), e, "Pa")?;
                            let ratio = c.stiffness_ratio.unwrap_or(1.0);
                            self.positive(&f("stiffness_ratio"), ratio, "−")?;
                            LinearStiffness::Deformability {
                                effective_modulus: e,
                                stiffness_ratio: ratio,
                            }
                        }
                        (None, Some(kn), Some(kt)) => {
                            self.positive(&f("kn"), kn, "N/m")?;
                            self.positive(&f("kt"), kt, "N/m")?;
                            LinearStiffness::Direct { kn, kt }
                        }
                        _ => {
                            return Err(self.err(
                                &f("model"),
                                "the linear model needs either effective_modulus (with optional stiffness_ratio) or both kn and kt".to_owned(),
                            ));
                        }
                    };
                    PairModel::Linear {
                        stiffness,
                        twirl: c.twirl.unwrap_or(true),
                        refined: c.refined.unwrap_or(true),
                    }
                }
                PairModelName::Hill if touches_wall && c.suction.is_some_and(|s| s != 0.0) => {
                    return Err(self.err(
                        &f("suction"),
                        format!(
                            "liquid bridges form between spheres only, and material \"{}\" is a wall's: remove suction from this pair (its hill contacts with walls stay dry)",
                            if wall_materials.contains(&a) { &c.materials[0] } else { &c.materials[1] }
                        ),
                    ));
                }
                PairModelName::Hill => {
                    let (e1, n1) = elastic(a)?;
                    let (e2, n2) = elastic(b)?;
                    let alpha = c.damping_constant.unwrap_or(0.0);
                    if !(0.0..=1.0).contains(&alpha) {
                        return Err(self.err(
                            &f("damping_constant"),
                            format!("{alpha} must lie in [0, 1] (memo Table 5)"),
                        ));
                    }
                    let suction = c.suction.unwrap_or(0.0);
                    if !(suction.is_finite() && suction >= 0.0) {
                        return Err(
                            self.err(&f("suction"), format!("{suction} must be ≥ 0 (in Pa)"))
                        );
                    }
                    let (e_e, g_e) = crate::material::effective_moduli((e1, n1), (e2, n2));
                    PairModel::Hill {
                        e_e,
                        g_e,
                        damping_constant: alpha,
                        suction,
                    }
                }
                PairModelName::Jager => {
                    let (e1, n1) = elastic(a)?;
                    let (e2, n2) = elastic(b)?;
                    if (e1, n1) != (e2, n2) {
                        return Err(self.err(
                            &f("materials"),
                            "Jäger's contact is for spheres of equal elastic constants; the two materials differ in young_modulus or poisson_ratio".to_owned(),
                        ));
                    }
                    let mu = table[a * n + b].friction();
                    let dp_max = c.dp_max.unwrap_or(0.0);
                    if !(0.0..=2.0 * mu).contains(&dp_max) {
                        return Err(self.err(
                            &f("dp_max"),
                            format!("{dp_max} must lie in [0, 2μ] = [0, {}]", 2.0 * mu),
                        ));
                    }
                    let capacity = c.capacity.unwrap_or(32);
                    if capacity < 3 {
                        return Err(self.err(
                            &f("capacity"),
                            format!("{capacity} is too small; a history needs at least 3 points"),
                        ));
                    }
                    PairModel::Jager {
                        shear_modulus: e1 / (2.0 * (1.0 + n1)),
                        poisson_ratio: n1,
                        dp_max,
                        capacity,
                    }
                }
            };
            let rolling = self.rolling(c, name, &f)?;
            table[a * n + b] = table[a * n + b].with_model(model).with_rolling(rolling);
            table[b * n + a] = table[b * n + a].with_model(model).with_rolling(rolling);
        }
        Ok(())
    }

    /// The rolling resistance of a `[[contact.pairs]]` entry of model `name`, if it has one.
    fn rolling(
        &self,
        c: &PairConfig,
        name: &str,
        f: &dyn Fn(&str) -> String,
    ) -> Result<Option<Rolling>> {
        use crate::contact::rolling::RollingModel;
        let Some(model) = c.rolling else {
            for (key, set) in [
                ("rolling_friction", c.rolling_friction.is_some()),
                ("rolling_stiffness", c.rolling_stiffness.is_some()),
                ("rolling_damping", c.rolling_damping.is_some()),
            ] {
                if set {
                    return Err(self.err(
                        &f(key),
                        "needs a rolling resistance model: add rolling = \"cdt\" or \"epsd\""
                            .to_owned(),
                    ));
                }
            }
            return Ok(None);
        };
        if c.model != PairModelName::Spring {
            return Err(self.err(
                &f("rolling"),
                format!(
                    "rolling resistance goes with model = \"spring\" pairs so far, not \"{name}\"; remove the rolling keys or use the spring model"
                ),
            ));
        }
        let friction = c.rolling_friction.ok_or_else(|| {
            self.err(
                &f("rolling_friction"),
                "is missing; rolling resistance needs its coefficient μ_r (e.g. 0.1)".to_owned(),
            )
        })?;
        if !(friction.is_finite() && friction >= 0.0) {
            return Err(self.err(&f("rolling_friction"), format!("{friction} must be ≥ 0")));
        }
        if model == RollingModel::Cdt {
            for (key, set) in [
                ("rolling_stiffness", c.rolling_stiffness.is_some()),
                ("rolling_damping", c.rolling_damping.is_some()),
            ] {
                if set {
                    return Err(self.err(
                        &f(key),
                        "belongs to rolling = \"epsd\"; the cdt model has no spring or dashpot: remove it".to_owned(),
                    ));
                }
            }
        }
        if let Some(k) = c.rolling_stiffness {
            self.positive(&f("rolling_stiffness"), k, "N·m/rad")?;
        }
        let damping = c.rolling_damping.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&damping) {
            return Err(self.err(
                &f("rolling_damping"),
                format!("{damping} must lie in [0, 1] (the ratio of critical damping)"),
            ));
        }
        Ok(Some(Rolling {
            model,
            friction,
            stiffness: c.rolling_stiffness,
            damping,
        }))
    }

    pub(super) fn materials(&self, configs: &[MaterialConfig]) -> Result<Vec<Material>> {
        if configs.is_empty() {
            return Err(self.err(
                "materials",
                "no material defined; add at least one [[materials]] table".to_owned(),
            ));
        }
        let mut out: Vec<Material> = Vec::with_capacity(configs.len());
        for (k, m) in configs.iter().enumerate() {
            let f = |name: &str| format!("materials[{k}].{name}");
            if out.iter().any(|o| o.name == m.name) {
                return Err(self.err(
                    &f("name"),
                    format!(
                        "\"{}\" is defined twice; material names must be unique",
                        m.name
                    ),
                ));
            }
            if let Some(rho) = m.density {
                self.positive(&f("density"), rho, "kg/m³")?;
            }
            if !(m.friction.is_finite() && m.friction >= 0.0) {
                let what = if m.friction.is_finite() {
                    "is negative"
                } else {
                    "is not a finite number"
                };
                return Err(self.err(
                    &f("friction"),
                    format!(
                        "{} {what}; the friction coefficient μ must be a finite number ≥ 0",
                        m.friction
                    ),
                ));
            }
            let elastic = [m.young_modulus, m.poisson_ratio, m.restitution];
            let direct = [m.kn, m.kt, m.gamma_n, m.gamma_t];
            let stiffness = if elastic.iter().any(Option::is_some) {
                if let Some(name) = [
                    ("kn", m.kn),
                    ("kt", m.kt),
                    ("gamma_n", m.gamma_n),
                    ("gamma_t", m.gamma_t),
                ]
                .iter()
                .find_map(|(n, x)| x.map(|_| *n))
                {
                    return Err(self.err(
                        &f(name),
                        "cannot be combined with elastic constants (young_modulus, poisson_ratio, restitution); give one set".to_owned(),
                    ));
                }
                let need = |name: &str, x: Option<f64>| {
                    x.ok_or_else(|| {
                        self.err(
                            &f(name),
                            "is missing; elastic materials need young_modulus, poisson_ratio and restitution".to_owned(),
                        )
                    })
                };
                let e = need("young_modulus", m.young_modulus)?;
                let nu = need("poisson_ratio", m.poisson_ratio)?;
                let r = need("restitution", m.restitution)?;
                self.positive(&f("young_modulus"), e, "Pa")?;
                if !(nu > -1.0 && nu < 0.5) {
                    return Err(
                        self.err(&f("poisson_ratio"), format!("{nu} must lie in (−1, 0.5)"))
                    );
                }
                if !(r > 0.0 && r <= 1.0) {
                    return Err(self.err(&f("restitution"), format!("{r} must lie in (0, 1]")));
                }
                Stiffness::Elastic {
                    young_modulus: e,
                    poisson_ratio: nu,
                    restitution: r,
                }
            } else if direct.iter().any(Option::is_some) {
                let need = |name: &str, x: Option<f64>| {
                    let x = x.ok_or_else(|| {
                        self.err(
                            &f(name),
                            "is missing; direct materials need kn, kt, gamma_n and gamma_t"
                                .to_owned(),
                        )
                    })?;
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(self.err(&f(name), format!("{x} must be ≥ 0")));
                    }
                    Ok(x)
                };
                let kn = need("kn", m.kn)?;
                self.positive(&f("kn"), kn, "N/m (Hooke) or N/m² (Hertz)")?;
                Stiffness::Direct {
                    kn,
                    kt: need("kt", m.kt)?,
                    gamma_n: need("gamma_n", m.gamma_n)?,
                    gamma_t: need("gamma_t", m.gamma_t)?,
                }
            } else {
                return Err(self.err(
                    &format!("materials[{k}]"),
                    "gives no stiffness; add young_modulus, poisson_ratio and restitution, or kn, kt, gamma_n and gamma_t".to_owned(),
                ));
            };
            if let Some(first) = out.first()
                && std::mem::discriminant(&first.stiffness) != std::mem::discriminant(&stiffness)
            {
                return Err(self.err(
                        &format!("materials[{k}]"),
                        format!(
                            "gives its stiffness another way than material \"{}\" (elastic constants versus kn/kt/gamma); all materials of a scene must use the same way",
                            first.name
                        ),
                    ));
            }
            out.push(Material {
                name: m.name.clone(),
                density: m.density,
                friction: m.friction,
                stiffness,
            });
        }
        Ok(out)
    }
}
