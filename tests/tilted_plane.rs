//! Fleischmann et al. (2015), Section 3, at the scale of one contact: only true history can
//! hold a static friction force when nothing moves; and the loads and constraints of
//! `[[loads]]` (a pushed sphere's stick–slip and roll–slip, prescribed motion, locks, wall
//! velocity schedules) against closed forms on both engines.

mod common;

use common::{rel, scene};
use wgdem_core::cpu::Simulation;

const THETA_DEG: f64 = 20.0; // below arctan(0.5) = 26.6°
const G: f64 = 9.81;

/// A sphere (r = 5 mm, E = 1e7 Pa, μ = 0.5) resting on a plane tilted by 20°, modelled as a
/// horizontal plane with tilted gravity. Its spin is fixed (PFC's `ball fix spin`): a free sphere
/// rolls down any incline whatever its friction, so only a non-rolling body tests whether the
/// contact can hold a static tangential force.
fn tilted(history: &str) -> Simulation {
    let t = THETA_DEG.to_radians();
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        gravity = [{gx}, 0.0, {gz}]
        [contact]
        law = "hertz"
        history = "{history}"
        [[materials]]
        name = "m"
        density = 2500.0
        friction = 0.5
        young_modulus = 1e7
        poisson_ratio = 0.3
        restitution = 0.5
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{{ position = [0.0, 0.0, 0.005], radius = 0.005, fix_spin = true }}]
        [[walls]]
        kind = "plane"
        name = "slope"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        "#,
        gx = G * t.sin(),
        gz = -G * t.cos(),
    ))
    .simulation
}

/// True history: after the first 10 000 steps of settling, the sphere does not move for the
/// remaining 90 000 steps of the 100 000. The tangential spring carries m g sin θ at a
/// deflection of about 1e-6 m; "does not move" is bounded by 1e-12 m, a millionth of that,
/// which f64 round-off of the force balance stays far below.
#[test]
fn true_history_holds_a_sphere_on_a_slope() {
    let mut sim = tilted("true");
    sim.run(10_000);
    let x0 = sim.particles.position[0];
    sim.run(90_000);
    let moved = (sim.particles.position[0] - x0).length();
    assert_eq!(sim.stats.wall_contacts, 1);
    assert_eq!(sim.stats.sliding, 0, "the contact slides");
    assert!(moved < 1e-12, "moved {moved:e} m in 90 000 steps");
}

/// Pseudo and no history: the tangential force is proportional to the sliding velocity
/// (Eq. 5 gives F_t = −f (k_t Δt + γ_t m̄) v_t), so the sphere creeps downhill at the terminal
/// speed v = m g sin θ / (f (k_t Δt + γ_t m̄)), f = √(R̄ δ) with δ from the Hertz balance of
/// m g cos θ (for no history k_t drops out). The creep speed measured over the last 90 000
/// steps must match that closed form within 1 %, and be non-zero, unlike true history.
#[test]
fn pseudo_and_no_history_creep_downhill_at_the_predicted_speed() {
    let t = THETA_DEG.to_radians();
    for history in ["pseudo", "none"] {
        let mut sim = tilted(history);
        sim.run(10_000);
        let (x0, t0) = (sim.particles.position[0].x, sim.time);
        sim.run(90_000);
        let speed = (sim.particles.position[0].x - x0) / (sim.time - t0);

        let m = sim.particles.mass[0];
        let r = sim.particles.radius[0];
        let params = sim.pair(0, 0).contact_params(m, r);
        let delta = (m * G * t.cos() / (params.kn * r.sqrt())).powf(2.0 / 3.0);
        let f = (r * delta).sqrt();
        let kt_dt = if history == "pseudo" {
            params.kt * sim.dt
        } else {
            0.0
        };
        let predicted = m * G * t.sin() / (f * (kt_dt + params.gamma_t * m));
        eprintln!("{history}: creep {speed:.4e} m/s, predicted {predicted:.4e} m/s");
        assert!(speed > 0.0, "{history}: no creep");
        assert!(
            rel(speed, predicted) < 0.01,
            "{history}: creep {speed:e} m/s, predicted {predicted:e} m/s"
        );
    }
}

/// Declares the CPU test `$cpu`, running `$check(None)`, and its GPU twin `$gpu`, running
/// `$check(Some(&context))`.
macro_rules! cpu_and_gpu {
    ($cpu:ident, $gpu:ident, $check:ident) => {
        #[test]
        fn $cpu() {
            $check(None);
        }
        #[test]
        fn $gpu() {
            if let Some(ctx) = common::gpu() {
                $check(Some(&ctx));
            }
        }
    };
}

/// A sphere (r = 5 mm, of the fixture material "m": ρ = 2500 kg/m³, μ = 0.5, E = 1e7 Pa) resting on a
/// floor (its initial overlap the static one, so it starts at rest) and pushed at its centre
/// along x by the ramped force `F(t) = k t` of a `[[loads]]` table, with `extra` added to
/// the load (a lock of its rotation, or nothing).
fn pushed(k: f64, extra: &str) -> Simulation {
    scene(&format!(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{{ position = [0.0, 0.0, 0.004996], radius = 0.005 }}]
        [[walls]]
        kind = "plane"
        name = "floor"
        material = "m"
        point = [0.0, 0.0, 0.0]
        normal = [0.0, 0.0, 1.0]
        [[loads]]
        particles = [0]
        force = {{ times = [0.0, 1.0], values = [[0.0, 0.0, 0.0], [{k}, 0.0, 0.0]] }}
        {extra}
        "#
    ))
    .simulation
}

/// The GPU engine of `sim` on `ctx`.
fn engine_for(ctx: &wgdem_gpu::GpuContext, sim: &Simulation) -> wgdem_gpu::GpuEngine {
    wgdem_gpu::GpuEngine::new(
        &ctx.device,
        &ctx.queue,
        sim,
        wgdem_gpu::GpuOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `sim` to time `t` on the CPU, or on the GPU with `ctx`.
fn advance_to(sim: &mut Simulation, t: f64, gpu: Option<&mut wgdem_gpu::GpuEngine>) {
    let steps = (t / sim.dt).round() as u64 - sim.steps;
    match gpu {
        None => sim.run(steps),
        Some(engine) => {
            engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
            engine.read_into(sim).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// Coulomb's stick–slip under a ramped push, with the sphere's rotation locked: it sticks
/// while `F < μW` (the contact's true history holds the tangential force) and then slides with
/// `m a = F − μW`, so from `t* = μW/k` its speed is `k (t − t*)² / (2m)`. While sticking it
/// only creeps by the tangential spring's give; sliding, the elastic transients of a stiff
/// contact (period about 1 ms) average out: 2 % of the closed form.
fn check_stick_then_slide(gpu: Option<&wgdem_gpu::GpuContext>) {
    let mu = 0.5;
    let probe = pushed(1.0, "lock = [\"rx\", \"ry\", \"rz\"]");
    let (m, w) = (probe.particles.mass[0], probe.particles.mass[0] * G);
    // Slide at t* = 0.1 s.
    let k = mu * w / 0.1;
    let mut sim = pushed(k, "lock = [\"rx\", \"ry\", \"rz\"]");
    let mut engine = gpu.map(|ctx| engine_for(ctx, &sim));
    advance_to(&mut sim, 0.08, engine.as_mut());
    let creep = sim.particles.velocity[0].x;
    let t_end = 0.16;
    advance_to(&mut sim, t_end, engine.as_mut());
    let v = sim.particles.velocity[0].x;
    let want = k * (t_end - 0.1_f64).powi(2) / (2.0 * m);
    eprintln!(
        "stick at 0.8 μW: v = {creep:.3e} m/s; sliding at {t_end} s: v = {v:.5} m/s, closed form {want:.5} m/s"
    );
    assert!(
        creep.abs() < 1e-3 * want,
        "it creeps at {creep} m/s while F < μW"
    );
    assert!(rel(v, want) < 0.02, "v = {v}, closed form {want}");
    assert_eq!(
        sim.particles.angular_velocity[0],
        glam::DVec3::ZERO,
        "rotation locked"
    );
}

cpu_and_gpu!(
    a_ramped_push_sticks_until_mu_w_then_slides,
    gpu_a_ramped_push_sticks_until_mu_w_then_slides,
    check_stick_then_slide
);

/// The same push with the rotation free: the sphere rolls without slipping, the floor
/// holding it with `F_f = −2F/7` (from `m a = F + F_f`, `I α = −F_f R`, `a = α R`,
/// `I = 2mR²/5`), which the floor's force (of the sphere on it) shows as `+2F/7`, until
/// `2F/7 = μW`, i.e. `F = 3.5 μW`; beyond, it slips. Checked at F = 2 μW (rolling: the floor
/// force within 2 % of 2F/7, the slip speed `v − ωR` below 1 % of `v`) and at F = 4.5 μW
/// (slipping: the floor force at μW within 2 %, and a slip speed).
fn check_roll_then_slip(gpu: Option<&wgdem_gpu::GpuContext>) {
    let mu = 0.5;
    let probe = pushed(1.0, "");
    let (w, r) = (probe.particles.mass[0] * G, probe.particles.radius[0]);
    // F = μW at t = 0.05 s: rolling until 0.175 s.
    let k = mu * w / 0.05;
    let mut sim = pushed(k, "");
    let mut engine = gpu.map(|ctx| engine_for(ctx, &sim));
    advance_to(&mut sim, 0.1, engine.as_mut());
    let f = k * sim.steps as f64 * sim.dt;
    let floor = sim.walls[0].force.x;
    let (v, omega) = (
        sim.particles.velocity[0].x,
        sim.particles.angular_velocity[0].y,
    );
    eprintln!(
        "rolling at F = {:.2} μW: floor force {floor:.4e} N (2F/7 = {:.4e} N), v = {v:.4} m/s, ωR = {:.4} m/s",
        f / (mu * w),
        2.0 * f / 7.0,
        omega * r
    );
    assert!(
        rel(floor, 2.0 * f / 7.0) < 0.02,
        "floor force {floor}, 2F/7 = {}",
        2.0 * f / 7.0
    );
    assert!(
        (v - omega * r).abs() < 0.01 * v,
        "slips while rolling: v {v}, ωR {}",
        omega * r
    );
    advance_to(&mut sim, 0.225, engine.as_mut());
    let floor = sim.walls[0].force.x;
    let (v, omega) = (
        sim.particles.velocity[0].x,
        sim.particles.angular_velocity[0].y,
    );
    eprintln!(
        "slipping at F = 4.5 μW: floor force {floor:.4e} N (μW = {:.4e} N), v − ωR = {:.4} m/s",
        mu * w,
        v - omega * r
    );
    assert!(
        rel(floor, mu * w) < 0.02,
        "floor force {floor}, μW = {}",
        mu * w
    );
    assert!(v - omega * r > 0.05 * v, "no slip beyond F = 3.5 μW");
}

cpu_and_gpu!(
    a_pushed_sphere_rolls_until_3_5_mu_w_then_slips,
    gpu_a_pushed_sphere_rolls_until_3_5_mu_w_then_slips,
    check_roll_then_slip
);

/// Prescribed motion and locks (`[[loads]]`) and a wall velocity schedule, against the
/// integrator's own sums (semi-implicit Euler takes the step's velocity at its start,
/// `t_n = n Δt`, so a ramp `v = a t` moves a body by `a Δt² N (N − 1) / 2` in N steps):
/// - particle 0, under gravity, has its velocity prescribed as that ramp along x (a = 100
///   m/s², to 0.1 m/s at 1 ms, then held) and its angular velocity about z as 50 rad/s: it
///   ignores gravity and turns by 50 rad/s × t;
/// - particle 1 falls with its z translation locked: it stays at its height;
/// - the plane `moving` follows the same ramp along x (its normal).
///
/// f64 on the CPU: 1e-12 relative (the wall, 1 m from the origin, to 1e-12 m); on the GPU the
/// velocities are f32 (about 6e-8 relative each step) and positions double-single: 1e-6
/// relative (the wall to 1e-9 m).
fn check_prescribed_motion(gpu: Option<&wgdem_gpu::GpuContext>) {
    let mut sim = scene(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        dt = 1e-5
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [
            { position = [0.0, 0.0, 0.5], radius = 0.005 },
            { position = [0.1, 0.0, 0.5], radius = 0.005 },
        ]
        [[walls]]
        kind = "plane"
        name = "moving"
        material = "m"
        point = [-1.0, 0.0, 0.0]
        normal = [1.0, 0.0, 0.0]
        velocity_schedule = { times = [0.0, 0.001], values = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]] }
        [[loads]]
        particles = [0]
        velocity = { times = [0.0, 0.001], values = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]] }
        angular_velocity = [0.0, 0.0, 50.0]
        [[loads]]
        particles = [1]
        lock = ["z"]
        "#,
    )
    .simulation;
    let steps = 300u64; // 3 ms: the ramp (100 steps), then held
    let x0 = sim.particles.position[0].x;
    match gpu {
        None => sim.run(steps),
        Some(ctx) => {
            let mut engine = engine_for(ctx, &sim);
            engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
            engine.read_into(&mut sim).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let tolerance = if gpu.is_none() { 1e-12 } else { 1e-6 };
    let dt = 1e-5;
    // Σ v(t_n) Δt over the ramp's 100 steps (v = 100 t), then 200 steps at 0.1 m/s.
    let ramp: f64 = (0..100).map(|n| 100.0 * n as f64 * dt * dt).sum();
    let moved = ramp + 200.0 * 0.1 * dt;
    let p = &sim.particles;
    let dx = p.position[0].x - x0;
    assert!(
        rel(dx, moved) < tolerance,
        "prescribed: moved {dx} m, want {moved} m"
    );
    assert!(
        (p.position[0].z - 0.5).abs() < 1e-12,
        "gravity moved a prescribed particle"
    );
    assert!(rel(p.velocity[0].x, 0.1) < tolerance);
    let q = p.orientation[0];
    // The spin's half-angle per step, 2.5e-4 rad, through common.wgsl's `sin_cos` on the GPU:
    // lavapipe 2.1e-6 off; the driver's own sin on an NVIDIA H200 turned 1.9e-5 short.
    let angle = 2.0 * q.w.abs().min(1.0).acos();
    eprintln!(
        "turned {angle} rad, {:.2e} from 50 rad/s × 3 ms",
        rel(angle, 50.0 * steps as f64 * dt)
    );
    assert!(
        rel(angle, 50.0 * steps as f64 * dt) < 1e-5,
        "turned by {angle} rad"
    );
    assert!((p.position[1].z - 0.5).abs() < 1e-12, "a locked z moved");
    assert_eq!(p.velocity[1].z, 0.0);
    let wall_x = match sim.walls[0].shape {
        wgdem_core::wall::WallShape::Plane { point, .. } => point.x,
        _ => unreachable!(),
    };
    // The wall's point sits 1 m from the origin: its rounding is an ulp of 1 m per step.
    let wall_tolerance = if gpu.is_none() { 1e-12 } else { 1e-9 };
    assert!(
        (wall_x + 1.0 - moved).abs() < wall_tolerance,
        "wall moved {} m, want {moved} m",
        wall_x + 1.0
    );
    assert!(rel(sim.walls[0].velocity.x, 0.1) < tolerance);
}

cpu_and_gpu!(
    prescribed_motion_locks_and_wall_schedules,
    gpu_prescribed_motion_locks_and_wall_schedules,
    check_prescribed_motion
);

/// A load on a whole `[[particles]]` group (`group = 1`) with a constant force and a ramped
/// torque, in zero gravity and without contacts, against the integrator's sums: after N steps
/// of Δt each sphere of the group has `v = F/m N Δt` and `ω_z = Σ τ(n Δt)/I Δt =
/// (k/I) Δt² N (N − 1)/2` for τ = k t (each step takes the value at its start), and its
/// `force_N` and `torque_N_m` (the particle's `force` and `torque`, which the outputs write)
/// hold the load: F, and τ at the last step's start. The sphere of group 0 is left alone.
/// CPU 1e-12 relative (f64 sums of 500 terms); GPU 1e-6 (f32 forces and torques, ~6e-8 a
/// step, in double-single velocities).
fn check_group_force_and_torque(gpu: Option<&wgdem_gpu::GpuContext>) {
    let mut sim = scene(
        r#"
        [simulation]
        duration = 1.0
        output_interval = 1.0
        dt = 1e-5
        gravity = [0.0, 0.0, 0.0]
        [contact]
        law = "hertz"
        history = "true"
        # fixture: material_m
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [{ position = [0.0, 0.0, 0.0], radius = 0.005 }]
        [[particles]]
        kind = "explicit"
        material = "m"
        spheres = [
            { position = [0.1, 0.0, 0.0], radius = 0.005 },
            { position = [0.2, 0.0, 0.0], radius = 0.004 },
            { position = [0.3, 0.0, 0.0], radius = 0.003 },
        ]
        [[loads]]
        group = 1
        force = [0.0, 0.0, -0.1]
        torque = { times = [0.0, 0.01], values = [[0.0, 0.0, 0.0], [0.0, 0.0, 1e-3]] }
        "#,
    )
    .simulation;
    let (steps, dt, k) = (500u64, 1e-5, 1e-3 / 0.01);
    match gpu {
        None => sim.run(steps),
        Some(ctx) => {
            let mut engine = engine_for(ctx, &sim);
            engine.run(steps).unwrap_or_else(|e| panic!("{e}"));
            engine.read_into(&mut sim).unwrap_or_else(|e| panic!("{e}"));
            // What the snapshots write (`contact_histories` reads the same).
            engine
                .read_forces_into(&mut sim)
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let tolerance = if gpu.is_none() { 1e-12 } else { 1e-6 };
    let p = &sim.particles;
    let n = steps as f64;
    for i in 1..4 {
        let v = -0.1 / p.mass[i] * n * dt;
        let w = k / p.inertia[i] * dt * dt * n * (n - 1.0) / 2.0;
        assert!(
            rel(p.velocity[i].z, v) < tolerance,
            "sphere {i}: v_z {}",
            p.velocity[i].z
        );
        assert!(
            rel(p.angular_velocity[i].z, w) < tolerance,
            "sphere {i}: ω_z {} against {w}",
            p.angular_velocity[i].z
        );
        assert!(
            rel(p.force[i].z, -0.1) < tolerance,
            "sphere {i}: force {}",
            p.force[i]
        );
        let tau = k * (n - 1.0) * dt;
        assert!(
            rel(p.torque[i].z, tau) < tolerance,
            "sphere {i}: torque {} against {tau}",
            p.torque[i]
        );
        assert_eq!(p.velocity[i].x, 0.0);
    }
    assert_eq!(p.velocity[0], glam::DVec3::ZERO, "group 0 moved");
    assert_eq!(p.angular_velocity[0], glam::DVec3::ZERO, "group 0 turned");
    assert_eq!(p.force[0], glam::DVec3::ZERO, "group 0 was loaded");
}

cpu_and_gpu!(
    a_group_takes_its_force_and_torque_and_reports_them,
    gpu_a_group_takes_its_force_and_torque_and_reports_them,
    check_group_force_and_torque
);
