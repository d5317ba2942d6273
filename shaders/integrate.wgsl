// integrate.wgsl — semi-implicit Euler, positions and velocities in double-single; velocities predicted at
// the next t_n for the dashpots; walls move at their prescribed velocity. A particle that has
// moved more than half the skin since the last build sets the rebuild flag for the next step's
// `rebuild.plan` (the check needs the new position, so it is done here rather than in a pass
// of its own that would load every position again); in a step that rebuilt the lists, the
// positions of the build are recorded first (here rather than in a pass of their own: a
// dispatch in every step, zero-sized in most, costs about 0.1 ms on lavapipe).
// A driven particle (`[[loads]]`, found through its stable id) has its applied force and torque
// at the step's start added (and written back, so that the force read for outputs includes
// them), takes its prescribed velocities instead of integrated ones, and has its locked
// components held at zero; a wall with a velocity schedule moves at the schedule's velocity.
// The step's time is its index (the host's base when it cleared the counters plus the steps
// `rebuild.plan` has begun since) times Δt.
// CPU twin: `Simulation::integrate` (crates/wgdem-core/src/cpu/integrate.rs) (and the prediction at the start of `compute_forces`).

import package::shared::{FAILED_SHORT, WG};
import package::common::{
    Counters, ForceTorqueWords, cell_entry, cell_shift, ds_sub, from_origin, Position, PositionWords, Predicted, PredictedWords, RebuildState,
    SimParams, Vec4Words, Wall, ds_add, fast_two_sum, force_torque_of, force_torque_words,
    position_of, position_words, predicted_of, predicted_words, sin_cos, spin_of, two_sum, vec4_of,
    vec4_words, wall_moved,
};
// The bindings this shares with the contact kernels (writable here, flag `integrating`), and
// their per-workgroup force sums for `steps`.
import package::contact_forces::{
    cell, counters, fine, ft, group_forces, pairs_once, params, pos, pred, vel, walls, with_handed,
};

// (Binding 19 is free: the angular velocities travel in the spare w words of `vel` and
// `pred`, common.wgsl `spin_of`, and the inverse inertia in `built_at`'s.)
@group(0) @binding(20) var<storage, read_write> orientation: array<Vec4Words>;
// Positions at the last build (xyz), recorded here in the step that rebuilds (`state.built`),
// and the inverse moment of inertia (w; 0 for a sphere whose spin is fixed), which no build
// changes: both are read every step, so the inverse inertia costs no load of its own.
@group(0) @binding(21) var<storage, read_write> built_at: array<Vec4Words>;
@group(0) @binding(22) var<storage, read_write> state: RebuildState;

// A particle's loads and constraints: each schedule a range of `points` (count 0: none).
struct Drive {
    force: vec2<u32>,
    torque: vec2<u32>,
    velocity: vec2<u32>,
    spin: vec2<u32>,
    lock: u32,           // bits 0–5: x, y, z, rx, ry, rz held at zero
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(23) var<storage, read> ids: array<u32>;
@group(0) @binding(24) var<storage, read> drive_of: array<u32>;   // by stable id
@group(0) @binding(25) var<storage, read> drives: array<Drive>;
@group(0) @binding(26) var<storage, read> points: array<vec4<f32>>; // t, x, y, z
// Wall points at the last build, double-single ([2w] high part, [2w + 1] low part; written by
// `rebuild.plan`): `steps` stops where a wall has moved half the skin since.
@group(0) @binding(27) var<storage, read> walls_built: array<vec4<f32>>;
// (Bindings 28–31 are the contact pass's.)
// Per stable id in a periodic cell, the whole-cell shifts its wraps took off since the start
// (xyz; its unwrapped position is x + H k: `Simulation::unwrapped_position`).
@group(0) @binding(32) var<storage, read_write> images: array<vec4<i32>>;

const NO_DRIVE: u32 = 0xffffffffu;

// Whether any component is NaN or ±inf (all exponent bits set).
fn non_finite(x: vec3<f32>) -> bool {
    let exponent = vec3<u32>(0x7f800000u);
    return any((bitcast<vec3<u32>>(x) & exponent) == exponent);
}

// The time of the step being taken (s): its index times Δt.
fn step_time() -> f32 {
    let index = f32(counters.base_lo) + 4294967296.0 * f32(counters.base_hi)
        + f32(atomicLoad(&counters.steps) - 1u);
    return index * params.dt;
}

// A piecewise-linear schedule (`range` = first point, count) at time `t`: held before the
// first point and after the last. CPU twin: `loads::Schedule::at`.
fn schedule_at(range: vec2<u32>, t: f32) -> vec3<f32> {
    let first = range.x;
    let last = range.x + range.y - 1u;
    if t <= points[first].x {
        return points[first].yzw;
    }
    if t >= points[last].x {
        return points[last].yzw;
    }
    var k = first + 1u;
    while points[k].x <= t {
        k++;
    }
    let a = points[k - 1u];
    let b = points[k];
    let s = (t - a.x) / (b.x - a.x);
    return a.yzw + (b.yzw - a.yzw) * s;
}

// `v` with the components whose bits are set in `lock` (from bit `shift`) held at zero.
fn locked(v: vec3<f32>, lock: u32, shift: u32) -> vec3<f32> {
    let keep = vec3<bool>(
        ((lock >> shift) & 1u) == 0u,
        ((lock >> (shift + 1u)) & 1u) == 0u,
        ((lock >> (shift + 2u)) & 1u) == 0u,
    );
    return select(vec3<f32>(0.0), v, keep);
}

fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

// Every particle, and the walls (at most MAX_WALLS ≤ WG, so the first workgroup, which every
// dispatch has, moves them all): nothing in this pass reads a wall.
@compute @workgroup_size(WG)
fn integrate(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < params.n {
        advance(gid.x);
    }
    if gid.x < params.n_walls {
        advance_wall(gid.x);
    }
}

// One step of particle `i`.
fn advance(i: u32) {
    let dt = params.dt;
    let p = position_of(pos[i]);
    // The lists of this step were built at these positions (CPU twin: the end of
    // `Simulation::update_neighbours`).
    let built_w = vec4_of(built_at[i]);
    var built = built_w.xyz;
    let inv_inertia = built_w.w;
    if state.built != 0u {
        built = p.hi.xyz + p.lo.xyz;
        built_at[i] = vec4_words(vec4<f32>(built, inv_inertia));
    }
    // The pairs' forces handed to this particle's B sides (where pairs are evaluated once),
    // written back for the outputs that read forces.
    var f = with_handed(i, force_torque_of(ft[i]));
    if pairs_once() {
        ft[i] = force_torque_words(f);
    }
    var drive = NO_DRIVE;
    var dr: Drive;
    var t = 0.0;
    if params.n_drives != 0u {
        drive = drive_of[ids[i]];
        if drive != NO_DRIVE {
            dr = drives[drive];
            t = step_time();
            if dr.force.y != 0u {
                f.force = vec4<f32>(f.force.xyz + schedule_at(dr.force, t), f.force.w);
            }
            if dr.torque.y != 0u {
                f.torque = vec4<f32>(f.torque.xyz + schedule_at(dr.torque, t), f.torque.w);
            }
            ft[i] = force_torque_words(f);
        }
    }
    let vel_old = vec4_of(vel[i]);
    let v_old = vel_old.xyz;
    let fine_old = fine[i];
    var accel = f.force.xyz / p.lo.w;
    // Cundall's local damping: each component loses α|F| against the velocity.
    let a_l = params.local_damping;
    let damped = f.force.xyz - a_l * abs(f.force.xyz) * sign(v_old);
    // The velocity in double-single: a step's increment (F/m Δt) can be far below an ulp of
    // the velocity (a grain under a small steady force), and an f32 sum would round part of
    // it away every step. The increment is added exactly (TwoSum) and the low part kept.
    let v_new = two_sum(v_old, damped / p.lo.w * dt, params.one);
    let v_sum = fast_two_sum(v_new.hi.xyz, v_new.lo.xyz + fine_old.xyz, params.one);
    var v = v_sum.hi.xyz;
    var v_lo = v_sum.lo.xyz;
    if drive != NO_DRIVE {
        if dr.velocity.y != 0u {
            v = schedule_at(dr.velocity, t);
            v_lo = vec3<f32>(0.0);
            accel = vec3<f32>(0.0);
        }
        v = locked(v, dr.lock, 0u);
        v_lo = locked(v_lo, dr.lock, 0u);
        accel = locked(accel, dr.lock, 0u);
    }
    fine[i] = vec4<f32>(v_lo, fine_old.w);
    var limit = 0.5 * params.skin;
    var moved: Position;
    if params.periodic != 0u {
        // In a periodic cell the velocity is the fluctuation about the affine field, and the
        // centre is mapped with the cell; one that left the cell after the step is moved back
        // in by whole edges. CPU twin: `Simulation::integrate` and `advance_cell`.
        let k = cell_entry(counters.base_lo, atomicLoad(&counters.steps), params.cell_first_lo);
        let next = cell.steps[k + 1u];
        let affine = cell.head.map * from_origin(p, cell.head, params.one);
        moved = ds_add(p.hi.xyz, p.lo.xyz + v_lo * dt, v * dt + affine, params.one);
        let s = next.inv * from_origin(moved, cell.head, params.one);
        let shift = floor(s);
        if any(shift != vec3<f32>(0.0)) {
            moved = ds_sub(moved.hi.xyz, moved.lo.xyz, cell_shift(next, shift, params.one),
                params.one);
            let id = ids[i];
            images[id] = images[id] + vec4<i32>(vec3<i32>(shift), 0);
        }
        // A pair across a face moves apart by the change of the cell's edges since the build
        // too, which is taken from the skin first (CPU twin: `update_neighbours`).
        let drift = length(next.h_hi[0] - cell.built.h_hi[0])
            + length(next.h_hi[1] - cell.built.h_hi[1]) + length(next.h_hi[2] - cell.built.h_hi[2]);
        limit = 0.5 * (params.skin - drift);
        if limit <= 0.0 {
            atomicOr(&state.flag, 1u);
        }
    } else {
        moved = ds_add(p.hi.xyz, p.lo.xyz + v_lo * dt, v * dt, params.one);
    }
    // Blow-up guard (`wgdem_core::guard`): counted for the host's check at the batch's end.
    // Non-finite values are told by their exponent bits, since WGSL lets compilers assume
    // that NaN and infinity do not occur.
    if non_finite(v) || non_finite(moved.hi.xyz) || dot(v, v) > params.max_speed_sq {
        atomicAdd(&counters.runaway, 1u);
        atomicMin(&counters.first_runaway, ids[i]);
    }
    pos[i] = position_words(
        Position(vec4<f32>(moved.hi.xyz, p.hi.w), vec4<f32>(moved.lo.xyz, p.lo.w)));
    // Moved more than half the skin since the last build: the next step rebuilds the lists.
    let d = (moved.hi.xyz - built) + moved.lo.xyz;
    if dot(d, d) > limit * limit {
        atomicOr(&state.flag, 1u);
    }

    // The angular velocity from its copies in the velocities' spare words.
    let w_old = spin_of(vel_old, predicted_of(pred[i]));
    var alpha = f.torque.xyz * inv_inertia;
    let damped_t = f.torque.xyz - a_l * abs(f.torque.xyz) * sign(w_old);
    var w = w_old + damped_t * inv_inertia * dt;
    if drive != NO_DRIVE {
        if dr.spin.y != 0u {
            w = schedule_at(dr.spin, t);
            alpha = vec3<f32>(0.0);
        }
        w = locked(w, dr.lock, 3u);
        alpha = locked(alpha, dr.lock, 3u);
    }
    let theta = w * dt;
    let angle = length(theta);
    if angle > 0.0 {
        let half = sin_cos(0.5 * angle);
        let spin = vec4<f32>(theta / angle * half.x, half.y);
        orientation[i] = vec4_words(normalize(quat_mul(spin, vec4_of(orientation[i]))));
    }
    // ω travels in the velocities' spare w words too (common.wgsl `spin_of`).
    vel[i] = vec4_words(vec4<f32>(v, w.x));
    pred[i] = predicted_words(Predicted(vec4<f32>(v + accel * (0.5 * dt), w.y),
        vec4<f32>(w + alpha * (0.5 * dt), w.z)));
}

// One step of wall `w`.
fn advance_wall(w: u32) {
    var wall = walls[w];
    if wall.schedule_count != 0u {
        wall.velocity = vec4<f32>(schedule_at(vec2<u32>(wall.schedule_first, wall.schedule_count),
            step_time()), 0.0);
        walls[w].velocity = wall.velocity;
    }
    let moved = ds_add(wall.point_hi.xyz, wall.point_lo.xyz, wall.velocity.xyz * params.dt, params.one);
    walls[w].point_hi = vec4<f32>(moved.hi.xyz, 0.0);
    walls[w].point_lo = vec4<f32>(moved.lo.xyz, 0.0);
}

// Whether `steps` takes one more step (1, or 2 for the batch's last, whose per-workgroup wall
// sums and contact counts the host reads) or stops (0): at the batch's end, after an
// overflow, or where the lists must be rebuilt first. A rebuild is a general step's: one
// recorded after this dispatch (a round, `counters.rounds` of them left), else the batch ends
// short of its end and the host finishes it from a general step. Invocation 0 only; a step
// taken is counted as begun, as `rebuild.plan` counts it.
fn next_step() -> u32 {
    let begun = atomicLoad(&counters.steps);
    if atomicLoad(&counters.failed) != 0u || begun == counters.end {
        return 0u;
    }
    var rebuild = atomicLoad(&state.flag) != 0u || params.rebuild_every_step != 0u;
    for (var w = 0u; w < params.n_walls; w++) {
        rebuild = rebuild || wall_moved(walls[w], walls_built[2u * w], walls_built[2u * w + 1u],
            params.skin);
    }
    if rebuild {
        if counters.rounds == 0u {
            atomicOr(&counters.failed, FAILED_SHORT);
        } else {
            counters.rounds -= 1u;
        }
        return 0u;
    }
    atomicAdd(&counters.steps, 1u);
    // This step keeps the lists of the last build.
    state.built = 0u;
    return select(1u, 2u, begun + 1u == counters.end);
}

var<workgroup> next: u32;

// Many steps of a small system in one dispatch of one workgroup: each step the contact forces
// of every particle, workgroup by workgroup as `contact_forces.main` (or `forces_only`: the
// same arithmetic in the same order, so the same bits), then `integrate`'s particles and walls,
// with barriers between. A batch is this dispatch, with general steps recorded after it where
// rebuilds are expected (each followed by this again), so a step of a system that fits costs
// no dispatch of its own: on lavapipe a dispatch costs about 0.1 ms whatever its size. One
// slot chunk.
@compute @workgroup_size(WG)
fn steps(@builtin(local_invocation_index) li: u32) {
    let groups = (params.n + WG - 1u) / WG;
    loop {
        // The last step's positions, velocities, flags and walls, seen by every invocation.
        storageBarrier();
        if li == 0u {
            next = next_step();
        }
        storageBarrier();
        let step = workgroupUniformLoad(&next);
        if step == 0u {
            break;
        }
        for (var g = 0u; g < groups; g++) {
            group_forces(g * WG + li, li, g, step == 2u);
        }
        // Every force summed before any particle moves.
        storageBarrier();
        for (var i = li; i < params.n; i += WG) {
            advance(i);
        }
        if li < params.n_walls {
            advance_wall(li);
        }
    }
}
