//! Reading a case file: every key checked with the file and field named.

use super::*;

impl ContactCase {
    /// Reads and validates a case file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses and validates case text; `file` names it in errors (with the line of the
    /// offending field).
    pub fn parse(text: &str, file: &str) -> Result<Self> {
        Self::parse_unlined(text, file).map_err(|e| crate::scene::with_line(e, text))
    }

    fn parse_unlined(text: &str, file: &str) -> Result<Self> {
        let config: CaseConfig = parse_toml(text, file)?;
        let check = Check { file };
        check_layout(&check, &config)?;
        let bodies = read_bodies(&check, &config)?;
        check_contact_keys(&check, &config)?;
        let (model, moduli) = match config.contact.model {
            CaseModel::Hertz | CaseModel::Hooke => {
                (spring_dashpot(&check, &config, &bodies)?, (0.0, 0.0))
            }
            CaseModel::Linear => (linear(&check, &config, &bodies)?, (0.0, 0.0)),
            CaseModel::Hill | CaseModel::Jager => hill_or_jager(&check, &config, &bodies)?,
        };
        Self::finish(config, bodies, model, moduli, file)
    }

    pub(super) fn finish(
        config: CaseConfig,
        bodies: [Body; 2],
        model: CaseParams,
        moduli: (f64, f64),
        file: &str,
    ) -> Result<Self> {
        let err = |field: &str, message: String| Error::invalid(file, field, message);
        let friction_ok = |field: &str, mu: f64| {
            if mu.is_finite() && mu >= 0.0 {
                Ok(())
            } else {
                Err(err(field, format!("{mu} must be ≥ 0")))
            }
        };
        let hill = config.contact.model == CaseModel::Hill;
        for (k, s) in config.stages.iter().enumerate() {
            let f = |name: &str| format!("stages[{k}].{name}");
            if s.steps == 0 {
                return Err(err(&f("steps"), "must be at least 1".into()));
            }
            for (name, v) in [
                ("translate", s.translate),
                ("rotate", s.rotate),
                ("rigid_rotation", s.rigid_rotation),
            ] {
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(err(&f(name), "has a non-finite component".into()));
                }
            }
            if s.free && (s.translate != [0.0; 3] || s.rotate != [0.0; 3]) {
                return Err(err(
                    &f("free"),
                    "a free stage cannot also prescribe `translate` or `rotate`; split it into two stages".into(),
                ));
            }
            if !(0.0..1.0).contains(&s.local_damping) {
                return Err(err(
                    &f("local_damping"),
                    format!("{} must lie in [0, 1)", s.local_damping),
                ));
            }
            if let Some(mu) = s.friction {
                friction_ok(&f("friction"), mu)?;
            }
            if let Some(a) = s.damping_constant {
                if !hill {
                    return Err(err(
                        &f("damping_constant"),
                        "only the hill model has a damping constant".into(),
                    ));
                }
                check_damping(&f("damping_constant"), a, file)?;
            }
            if s.moisture.is_some() && !hill {
                return Err(err(
                    &f("moisture"),
                    "only the hill model carries moisture".into(),
                ));
            }
            if !(s.moisture_gap.is_finite() && s.moisture_gap >= 0.0) {
                return Err(err(
                    &f("moisture_gap"),
                    format!("{} must be ≥ 0 (in m)", s.moisture_gap),
                ));
            }
        }
        // One row per step is kept (and a prescribed stage's kinematics while it is
        // evaluated): refuse what cannot fit before allocating it.
        let steps: f64 = config.stages.iter().map(|s| s.steps as f64).sum();
        let row = (std::mem::size_of::<super::CaseRow>()
            + std::mem::size_of::<super::StepKinematics>()
            + std::mem::size_of::<glam::DVec3>()) as f64;
        crate::guard::check_memory(
            file,
            "stages",
            steps * row,
            &format!("{steps:.3e} steps (one row each)"),
        )?;
        Ok(Self {
            config,
            bodies,
            model,
            moduli,
        })
    }
}

/// Errors of one case file, naming it and the field.
struct Check<'a> {
    file: &'a str,
}

impl Check<'_> {
    fn err(&self, field: &str, message: String) -> Error {
        Error::invalid(self.file, field, message)
    }

    /// `x` where it is a positive number (in `unit`).
    fn positive(&self, field: &str, x: f64, unit: &str) -> Result<f64> {
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(self.err(field, format!("{x} must be a positive number (in {unit})")))
        }
    }
}

/// The time step, two bodies and at least one stage.
fn check_layout(check: &Check, config: &CaseConfig) -> Result<()> {
    check.positive("dt", config.dt, "s")?;
    if config.bodies.len() != 2 {
        return Err(check.err(
            "bodies",
            format!(
                "has {} entries; give exactly two [[bodies]]: body 1 (sphere or plane) and body 2 (sphere)",
                config.bodies.len()
            ),
        ));
    }
    if config.stages.is_empty() {
        return Err(check.err(
            "stages",
            "is empty; add at least one [[stages]] with `name` and `steps`".into(),
        ));
    }
    Ok(())
}

/// The two bodies: body 1 a sphere or a plane (of infinite radius and mass), body 2 a
/// sphere; masses where the model, a free stage or a dashpot needs them.
fn read_bodies(check: &Check, config: &CaseConfig) -> Result<[Body; 2]> {
    let err = |field: &str, message: String| check.err(field, message);
    let positive = |field: &str, x: f64, unit: &str| check.positive(field, x, unit);
    let c = &config.contact;
    let hill = c.model == CaseModel::Hill;
    let spring_dashpot = matches!(c.model, CaseModel::Hertz | CaseModel::Hooke);
    let damped =
        spring_dashpot && (c.gamma_n.unwrap_or(0.0) > 0.0 || c.gamma_t.unwrap_or(0.0) > 0.0);
    let needs_mass = hill || damped || config.stages.iter().any(|s| s.free);
    let mut bodies = [Body {
        plane: false,
        radius: 0.0,
        position: DVec3::ZERO,
        normal: DVec3::Z,
        mass: f64::INFINITY,
        inertia: f64::INFINITY,
        velocity: DVec3::ZERO,
        spin: DVec3::ZERO,
    }; 2];
    for (k, spec) in config.bodies.iter().enumerate() {
        let f = |name: &str| format!("bodies[{k}].{name}");
        let body = &mut bodies[k];
        body.position = DVec3::from_array(spec.position);
        if !body.position.is_finite() {
            return Err(err(&f("position"), "has a non-finite component".into()));
        }
        if spec.kind == BodyKind::Plane {
            if k == 1 {
                return Err(err(
                    &f("kind"),
                    "body 2 must be a sphere; put the plane first".into(),
                ));
            }
            if c.model == CaseModel::Hill && c.suction.is_some_and(|s| s != 0.0) {
                return Err(err(
                    "contact.suction",
                    "liquid bridges form between spheres only: remove suction, or make body 1 a sphere".into(),
                ));
            }
            let n = spec
                .normal
                .map(DVec3::from_array)
                .and_then(DVec3::try_normalize)
                .ok_or_else(|| {
                    err(
                        &f("normal"),
                        "a plane needs a nonzero `normal` towards body 2".into(),
                    )
                })?;
            body.plane = true;
            body.normal = n;
            // A plane is a body of infinite radius and mass: the hill model's R_e and m_e
            // and Jäger's pair radius take the sphere's values (see their `new`).
            body.radius = f64::INFINITY;
            continue;
        }
        body.radius = positive(
            &f("radius"),
            spec.radius.ok_or_else(|| {
                err(
                    &f("radius"),
                    "is missing; give the sphere's radius in m".into(),
                )
            })?,
            "m",
        )?;
        if needs_mass {
            let rho = spec.density.ok_or_else(|| {
                err(
                    &f("density"),
                    "is missing; the hill model, free stages and the spring–dashpot's damping need the density in kg/m³"
                        .into(),
                )
            })?;
            positive(&f("density"), rho, "kg/m³")?;
            body.mass = rho * 4.0 / 3.0 * std::f64::consts::PI * body.radius.powi(3);
            body.inertia = 0.4 * body.mass * body.radius * body.radius;
        }
    }
    Ok(bodies)
}

/// The contact's keys that every model reads: friction, and the spring–dashpot's own keys
/// refused elsewhere.
fn check_contact_keys(check: &Check, config: &CaseConfig) -> Result<()> {
    let c = &config.contact;
    let spring_dashpot = matches!(c.model, CaseModel::Hertz | CaseModel::Hooke);
    if !(c.friction.is_finite() && c.friction >= 0.0) {
        return Err(check.err("contact.friction", format!("{} must be ≥ 0", c.friction)));
    }
    if c.history.is_some() && !spring_dashpot {
        return Err(check.err(
            "contact.history",
            "only the hertz and hooke laws take a history mode; remove it".into(),
        ));
    }
    if (c.gamma_n.is_some() || c.gamma_t.is_some()) && !spring_dashpot {
        return Err(check.err(
            "contact.gamma_n",
            "gamma_n and gamma_t are the hertz and hooke laws' dashpots; remove them".into(),
        ));
    }
    Ok(())
}

/// Fleischmann's Hertz or Hooke spring–dashpot (Eq. 1–6).
fn spring_dashpot(check: &Check, config: &CaseConfig, bodies: &[Body; 2]) -> Result<CaseParams> {
    let err = |field: &str, message: String| check.err(field, message);
    let positive = |field: &str, x: f64, unit: &str| check.positive(field, x, unit);
    let c = &config.contact;
    let (r1, r2) = (bodies[0].radius, bodies[1].radius);
    let law = if c.model == CaseModel::Hertz {
        crate::contact::ContactLaw::Hertz
    } else {
        crate::contact::ContactLaw::Hooke
    };
    let unit = if law == crate::contact::ContactLaw::Hertz {
        "N/m²"
    } else {
        "N/m"
    };
    let missing = |field: &str| {
        err(
            field,
            format!(
                "is missing; the {} law needs Eq. 1's constants `kn` and `kt` (in {unit})",
                if law == crate::contact::ContactLaw::Hertz {
                    "hertz"
                } else {
                    "hooke"
                }
            ),
        )
    };
    let kn = positive(
        "contact.kn",
        c.kn.ok_or_else(|| missing("contact.kn"))?,
        unit,
    )?;
    let kt = positive(
        "contact.kt",
        c.kt.ok_or_else(|| missing("contact.kt"))?,
        unit,
    )?;
    let mut gammas = [0.0; 2];
    for (g, (name, value)) in gammas.iter_mut().zip([
        ("contact.gamma_n", c.gamma_n),
        ("contact.gamma_t", c.gamma_t),
    ]) {
        let v = value.unwrap_or(0.0);
        if !(v.is_finite() && v >= 0.0) {
            return Err(err(name, format!("{v} must be ≥ 0")));
        }
        *g = v;
    }
    for (name, given) in [
        ("contact.effective_modulus", c.effective_modulus.is_some()),
        ("contact.stiffness_ratio", c.stiffness_ratio.is_some()),
        ("contact.twirl", c.twirl.is_some()),
        ("contact.damping_constant", c.damping_constant.is_some()),
        ("contact.suction", c.suction.is_some()),
        ("contact.dp_max", c.dp_max.is_some()),
        ("contact.capacity", c.capacity.is_some()),
    ] {
        if given {
            return Err(err(
                name,
                "belongs to another model; the hertz and hooke laws take kn, kt, gamma_n, gamma_t, friction and history".into(),
            ));
        }
    }
    let (m1, m2) = (bodies[0].mass, bodies[1].mass);
    let (eff_radius, eff_mass) = if bodies[0].plane {
        (r2, m2)
    } else {
        (
            crate::material::effective(r1, r2),
            crate::material::effective(m1, m2),
        )
    };
    Ok(CaseParams::SpringDashpot(
        crate::contact::ContactModel {
            law,
            history: c.history.unwrap_or(crate::contact::HistoryMode::True),
        },
        crate::contact::ContactParams {
            kn,
            kt,
            gamma_n: gammas[0],
            gamma_t: gammas[1],
            friction: c.friction,
            // Undamped without densities: no mass is needed (and none is known).
            eff_mass: if eff_mass.is_finite() { eff_mass } else { 0.0 },
            eff_radius,
            damping: crate::contact::Damping::Viscoelastic,
            rolling: None,
        },
    ))
}

/// Kuhn, Suzuki & Daouadji's linear-frictional contact.
fn linear(check: &Check, config: &CaseConfig, bodies: &[Body; 2]) -> Result<CaseParams> {
    let err = |field: &str, message: String| check.err(field, message);
    let positive = |field: &str, x: f64, unit: &str| check.positive(field, x, unit);
    let c = &config.contact;
    let (r1, r2) = (bodies[0].radius, bodies[1].radius);
    let (kn, kt) = match (c.effective_modulus, c.kn, c.kt) {
        (Some(e), None, None) => {
            positive("contact.effective_modulus", e, "Pa")?;
            let ratio = c.stiffness_ratio.unwrap_or(1.0);
            positive("contact.stiffness_ratio", ratio, "−")?;
            let (r, l) = if bodies[0].plane {
                (r2, r2)
            } else {
                (r1.min(r2), r1 + r2)
            };
            let kn = std::f64::consts::PI * r * r * e / l;
            (kn, kn / ratio)
        }
        (None, Some(kn), Some(kt)) => (
            positive("contact.kn", kn, "N/m")?,
            positive("contact.kt", kt, "N/m")?,
        ),
        _ => {
            return Err(err(
                "contact",
                "the linear model needs either `effective_modulus` (with optional `stiffness_ratio`) or both `kn` and `kt`".into(),
            ));
        }
    };
    Ok(CaseParams::Linear(KuhnParams {
        kn,
        kt,
        friction: c.friction,
        twirl: c.twirl.unwrap_or(true),
        refined: true,
    }))
}

/// Potyondy's hill model or Jäger's contact, from each body's elastic constants; the pair's
/// effective moduli (E*, G*) for the hill model.
fn hill_or_jager(
    check: &Check,
    config: &CaseConfig,
    bodies: &[Body; 2],
) -> Result<(CaseParams, (f64, f64))> {
    let err = |field: &str, message: String| check.err(field, message);
    let positive = |field: &str, x: f64, unit: &str| check.positive(field, x, unit);
    let file = check.file;
    let c = &config.contact;
    let (r1, r2) = (bodies[0].radius, bodies[1].radius);
    let mut elastic = [(0.0, 0.0); 2];
    for (k, spec) in config.bodies.iter().enumerate() {
        let e = spec.young_modulus.ok_or_else(|| {
            err(
                &format!("bodies[{k}].young_modulus"),
                "is missing; the hill and Jäger models need each body's Young's modulus in Pa (a plane's too)"
                    .into(),
            )
        })?;
        positive(&format!("bodies[{k}].young_modulus"), e, "Pa")?;
        let nu = spec.poisson_ratio.ok_or_else(|| {
            err(
                &format!("bodies[{k}].poisson_ratio"),
                "is missing; give the grain's Poisson's ratio in (−1, 0.5]".into(),
            )
        })?;
        if !(nu > -1.0 && nu <= 0.5) {
            return Err(err(
                &format!("bodies[{k}].poisson_ratio"),
                format!("{nu} must lie in (−1, 0.5]"),
            ));
        }
        elastic[k] = (e, nu);
    }
    let [(e1, n1), (e2, n2)] = elastic;
    if c.model == CaseModel::Jager {
        if (e1, n1) != (e2, n2) {
            return Err(err(
                "bodies[1].young_modulus",
                "Jäger's contact is for two bodies of the same material; give both bodies the same young_modulus and poisson_ratio".into(),
            ));
        }
        let dp_max = c.dp_max.unwrap_or(0.0);
        if !(0.0..=2.0 * c.friction).contains(&dp_max) {
            return Err(err(
                "contact.dp_max",
                format!("{dp_max} must lie in [0, 2f] = [0, {}]", 2.0 * c.friction),
            ));
        }
        let capacity = c.capacity.unwrap_or(32);
        if capacity < 3 {
            return Err(err(
                "contact.capacity",
                format!("{capacity} is too small; a history needs at least 3 points"),
            ));
        }
        let g = e1 / (2.0 * (1.0 + n1));
        let model = CaseParams::Jager(JagerParams::new(
            g,
            n1,
            (r1, r2),
            c.friction,
            dp_max,
            capacity,
        ));
        return Ok((model, (0.0, 0.0)));
    }
    let moduli = crate::material::effective_moduli((e1, n1), (e2, n2));
    let alpha = c.damping_constant.unwrap_or(0.0);
    check_damping("contact.damping_constant", alpha, file)?;
    let suction = c.suction.unwrap_or(0.0);
    if !(suction.is_finite() && suction >= 0.0) {
        return Err(err(
            "contact.suction",
            format!("{suction} must be ≥ 0 (in Pa)"),
        ));
    }
    let model = CaseParams::Hill(HillParams::new(
        moduli.0,
        moduli.1,
        (r1, r2),
        (bodies[0].mass, bodies[1].mass),
        alpha,
        c.friction,
        suction,
    ));
    Ok((model, moduli))
}

fn check_damping(field: &str, alpha: f64, file: &str) -> Result<()> {
    if (0.0..=1.0).contains(&alpha) {
        Ok(())
    } else {
        Err(Error::invalid(
            file,
            field,
            format!("{alpha} must lie in [0, 1] (memo Table 5)"),
        ))
    }
}
