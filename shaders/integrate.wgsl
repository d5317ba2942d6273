// integrate.wgsl — semi-implicit Euler, positions in double-single; velocities predicted at
// the next t_n for the dashpots; walls move at their prescribed velocity. A particle that has
// moved more than half the skin since the last build sets the rebuild flag for the next step's
// `rebuild.plan` (the check needs the new position, so it is done here rather than in a pass
// of its own that would load every position again).
// CPU twin: `Simulation::integrate` (crates/wgdem-core/src/cpu/integrate.rs) (and the prediction at the start of `compute_forces`).

@group(0) @binding(0) var<uniform> params: SimParams;
@group(0) @binding(1) var<storage, read_write> pos: array<PositionWords>;
@group(0) @binding(2) var<storage, read_write> vel: array<Vec4Words>;  // w = ω_x (spin_of)
@group(0) @binding(3) var<storage, read_write> omega: array<Vec4Words>;
@group(0) @binding(4) var<storage, read_write> orientation: array<Vec4Words>;
@group(0) @binding(5) var<storage, read_write> pred: array<PredictedWords>;  // ω_y, ω_z in w
@group(0) @binding(6) var<storage, read> ft: array<ForceTorqueWords>;
@group(0) @binding(7) var<storage, read_write> walls: array<Wall>;
@group(0) @binding(8) var<storage, read> built_at: array<Vec4Words>;  // positions at the last build
@group(0) @binding(9) var<storage, read_write> state: RebuildState;

fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= params.n {
        return;
    }
    let dt = params.dt;
    let p = position_of(pos[i]);
    let f = force_torque_of(ft[i]);
    let v_old = vec4_of(vel[i]).xyz;
    let accel = f.force.xyz / p.lo.w;
    // Cundall's local damping: each component loses α|F| against the velocity.
    let a_l = params.local_damping;
    let damped = f.force.xyz - a_l * abs(f.force.xyz) * sign(v_old);
    let v = v_old + damped / p.lo.w * dt;
    let moved = ds_add(p.hi.xyz, p.lo.xyz, v * dt, params.one);
    pos[i] = position_words(
        Position(vec4<f32>(moved.hi.xyz, p.hi.w), vec4<f32>(moved.lo.xyz, p.lo.w)));
    // Moved more than half the skin since the last build: the next step rebuilds the lists.
    let d = (moved.hi.xyz - vec4_of(built_at[i]).xyz) + moved.lo.xyz;
    let limit = 0.5 * params.skin;
    if dot(d, d) > limit * limit {
        atomicOr(&state.flag, 1u);
    }

    let om = vec4_of(omega[i]);
    let alpha = f.torque.xyz * om.w;
    let damped_t = f.torque.xyz - a_l * abs(f.torque.xyz) * sign(om.xyz);
    let w = om.xyz + damped_t * om.w * dt;
    omega[i] = vec4_words(vec4<f32>(w, om.w));
    let theta = w * dt;
    let angle = length(theta);
    if angle > 0.0 {
        let spin = vec4<f32>(theta / angle * sin(0.5 * angle), cos(0.5 * angle));
        orientation[i] = vec4_words(normalize(quat_mul(spin, vec4_of(orientation[i]))));
    }
    // ω travels in the velocities' spare w words too (common.wgsl `spin_of`).
    vel[i] = vec4_words(vec4<f32>(v, w.x));
    pred[i] = predicted_words(Predicted(vec4<f32>(v + accel * (0.5 * dt), w.y),
        vec4<f32>(w + alpha * (0.5 * dt), w.z)));
}

@compute @workgroup_size(WG)
fn walls_main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = gid.x;
    if w >= params.n_walls {
        return;
    }
    let wall = walls[w];
    let moved = ds_add(wall.point_hi.xyz, wall.point_lo.xyz, wall.velocity.xyz * params.dt, params.one);
    walls[w].point_hi = vec4<f32>(moved.hi.xyz, 0.0);
    walls[w].point_lo = vec4<f32>(moved.lo.xyz, 0.0);
}
