// contact_forces.wgsl — force and torque on every particle, without float atomics.
//
// Each pair is evaluated on canonically ordered inputs (A = the smaller stable id), either on
// both sides or once (`Chunk::once`, chosen by the host: `GpuOptions::pairs_once`, one slot
// chunk only). Once: A's invocation adds A's share to its own sums, keeps the pair's history in
// A's slot, and hands B's share (force, torque about B's centre, contact work) to B's slot of
// the pair in `hand`, at the index `neighbours.link_pairs` found when the lists were built;
// `integrate` adds it to B (`with_handed`). On both sides: each side keeps its own copy of the
// history, B adds its share itself, and `integrate` gathers nothing. Every particle sums its
// walls, then its A sides, then its B sides in list order (the lists put A sides first), with
// B's share as one term either way, so both ways give the same bits. No float atomics and fixed
// sum orders: a run is bitwise reproducible on a device, and Newton's third law holds exactly.
// Particle–wall contacts follow, each particle near a wall
// keeping a row of wall slots (wall id and a two-part tangential history), one per wall within
// its skin at the last build, at that wall's rank among them (`rebuild.walls_near` sizes the
// rows and moves the slots when the walls change); each workgroup sums its
// particles' wall forces with a fixed tree and writes one partial per wall, which `wall_reduce`
// sums in a fixed order, and adds up its particles' contact counts (integer atomics in
// workgroup memory, exact in any order) into one `stats` entry.
// Dispatched once per chunk of particles (see `Chunk`).
// CPU twin: `Simulation::compute_forces` (crates/wgdem-core/src/cpu/contact_forces.rs).

import package::shared::{
    A_SIDE, FAILED_DEFECT, LAW_HERTZ, LINEAR_DEFORMABILITY, LINEAR_TWIRL, MAX_WALLS, MODEL_HILL,
    MODEL_JAGER, MODEL_LINEAR, MOISTURE_WET, NO_ROW, NO_WALL, ROLLING_EPSD, ROLLING_NONE,
    ROLLING_PRESENT, WALL_PLANE, WALL_PLATE, WG,
};
import package::spec::{MODELS_PRESENT, ONE_MATERIAL, SLOT_WORDS, THE_MATERIAL, WALLS_PRESENT};
import package::common::{
    Cell, Chunk, Counters, ForceTorque, ForceTorqueWords, PairRecord, Position, PositionWords,
    PredictedWords, SimParams, Slot, SlotWords, SphereGap, U32x4Words, Vec4Words, Wall, WallSlot,
    cell_entry, cell_shift, contact_force, contact_params, ds_diff, ds_sub, fast_two_sum,
    force_torque_words, law_factor,
    make_slot, over_plate_face, partner_index, plate_gap, position_of, predicted_of, slot_aux,
    slot_of, slot_words, sphere_gap, spin_of, two_sum, u32x4_words, vec4_of, vec4_words, with_aux,
};
import package::models::{
    HillState, JagerParams, KuhnParams, KuhnState, hill_params, hill_step, inv_rolling_inertia,
    jager_step, kuhn_step, rolling_torque,
};
import package::jager_slot::{jager_head, jager_head_state};
import package::slot_tables::{IN_WALL_SLOTS, NOWHERE, slots, wall_slots};

@group(0) @binding(0) var<uniform> params: SimParams;
// Per-particle arrays in their stored form (common.wgsl's words block: structs, or 64-bit words).
// `integrate.wgsl` builds its kernels on this module (flag `integrating`): there the
// particle and wall state it advances is writable, at the same bindings.
@if(!integrating) @group(0) @binding(1) var<storage, read> pos: array<PositionWords>;  // lo.w = mass
@if(integrating) @group(0) @binding(1) var<storage, read_write> pos: array<PositionWords>;
// The angular velocity ω_{n−1/2} travels in the velocities' spare w words (`spin_of`).
@if(!integrating) @group(0) @binding(2) var<storage, read> vel: array<Vec4Words>;  // v_{n-1/2}; w = ω_x
@if(integrating) @group(0) @binding(2) var<storage, read_write> vel: array<Vec4Words>;
@if(!integrating) @group(0) @binding(3) var<storage, read> pred: array<PredictedWords>;  // v.w = ω_y, w.w = ω_z
@if(integrating) @group(0) @binding(3) var<storage, read_write> pred: array<PredictedWords>;
@group(0) @binding(4) var<storage, read> material: array<u32>;
@group(0) @binding(5) var<storage, read> pair_table: array<PairRecord>;
@if(!integrating) @group(0) @binding(6) var<storage, read> walls: array<Wall>;
@if(integrating) @group(0) @binding(6) var<storage, read_write> walls: array<Wall>;
@group(0) @binding(7) var<storage, read> count: array<u32>;
// (Bindings 8 and 9, the neighbour and wall slots, are `package::slot_tables`'s.)
@group(0) @binding(10) var<storage, read_write> wall_partial: array<ForceTorque>;  // [group][wall]
@group(0) @binding(11) var<storage, read_write> ft: array<ForceTorqueWords>;
@group(0) @binding(12) var<storage, read_write> stats: array<U32x4Words>;  // [group]: pairs, walls, sliding
@group(0) @binding(13) var<uniform> chunk: Chunk;
@group(0) @binding(14) var<storage, read_write> counters: Counters;
// Contact work per particle where the pairs account it (wide slots; else 16 unused bytes):
// x the elastic energy of its contacts after this step, y + z the work they have dissipated
// since the start (double-single). A pair counts on its B side, a wall contact on its particle.
@group(0) @binding(15) var<storage, read_write> work: array<Vec4Words>;
// Walls within the particle's skin at the last build (bit w; `rebuild.walls_near`): no other
// wall can touch it before the next build, so only these are visited.
@group(0) @binding(16) var<storage, read> wall_mask: array<u32>;
// The particle's row of wall slots, held while a wall is within its skin (`rebuild.walls_alloc`).
@group(0) @binding(17) var<storage, read> wall_row: array<u32>;
// The low parts of each particle's velocity (xyz, `integrate`'s) and radius (w): the radius is
// r = pos.hi.w + fine.w, so that overlaps of stiff grains keep their precision.
@if(!integrating) @group(0) @binding(18) var<storage, read> fine: array<vec4<f32>>;
@if(integrating) @group(0) @binding(18) var<storage, read_write> fine: array<vec4<f32>>;
// (Bindings 19–27 are `integrate`'s own.)
// Per neighbour slot of B's side: the force on B of the pair (xyz) and the contact's elastic
// energy after the step (w), then its torque on B (xyz) and the work it dissipated in the step
// (w), written by A's invocation; the slots of A's side are not used.
@group(0) @binding(28) var<storage, read_write> hand: array<Vec4Words>;
// Per neighbour slot of A's side: the index of B's slot of the pair in the chunk
// (`neighbours.link_pairs`).
@group(0) @binding(29) var<storage, read> link: array<u32>;
// The periodic cell (common.wgsl `Cell`; `params.periodic`): a pair acts through its nearest
// image, and sees the affine field's velocity difference `L d` across its branch vector `d`.
@group(0) @binding(30) var<storage, read> cell: Cell;
// Per particle in a periodic cell, Σ f ⊗ d over the pairs of which it is the A side (`f` the
// force on B, `d` the branch vector from A to B; column j is f d_j) and over its wall contacts
// (`f` the force on the particle, `d` from the contact point to its centre): the host sums them
// into the cell's Love–Weber stress (`Simulation::stress`).
@group(0) @binding(31) var<storage, read_write> cell_stress: array<mat3x3<f32>>;

// Whether each pair is evaluated once, by its A side (`hand`): chosen by the host
// (`GpuOptions::pairs_once`), on one slot chunk only.
fn pairs_once() -> bool {
    return chunk.once != 0u;
}

// MAX_WALLS comes from the shared constants (shared.rs).
var<workgroup> red_f: array<vec4<f32>, 64>;
var<workgroup> red_t: array<vec4<f32>, 64>;
// The workgroup's contact counts: pairs, wall contacts, sliding contacts (integer sums, so their
// order does not matter).
var<workgroup> red_stats: array<atomic<u32>, 3>;

@compute @workgroup_size(WG)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
) {
    // Chunks start at multiples of the workgroup size, so this is the global group index.
    group_forces(gid.x, li, chunk.first / WG + wg.x, true);
}

// The forces on the particle at `local` in the chunk (none past its end), by invocation `li`
// of a workgroup covering workgroup `group`'s particles, with the group's wall sums and
// contact counts where `sums` (`main`; `integrate.steps` group by group, with sums in a
// batch's last step). No early return: every invocation reaches the reduction's barriers.
fn group_forces(local: u32, li: u32, group: u32, sums: bool) {
    var wall_f: array<vec4<f32>, MAX_WALLS>;
    var wall_t: array<vec4<f32>, MAX_WALLS>;
    if sums {
        if li < 3u {
            atomicStore(&red_stats[li], 0u);
        }
        workgroupBarrier();
    }
    if local < chunk.count {
        particle(chunk.first + local, local, &wall_f, &wall_t, sums);
    }
    if !sums {
        return;
    }
    workgroupBarrier();
    if li == 0u {
        stats[group] = u32x4_words(vec4<u32>(atomicLoad(&red_stats[0]),
            atomicLoad(&red_stats[1]), atomicLoad(&red_stats[2]), 0u));
    }
    for (var w = 0u; w < params.n_walls; w++) {
        red_f[li] = wall_f[w];
        red_t[li] = wall_t[w];
        workgroupBarrier();
        for (var half = 32u; half > 0u; half = half / 2u) {
            if li < half {
                red_f[li] += red_f[li + half];
                red_t[li] += red_t[li + half];
            }
            workgroupBarrier();
        }
        if li == 0u {
            wall_partial[group * params.n_walls + w] = ForceTorque(red_f[0], red_t[0]);
        }
        workgroupBarrier();
    }
}

// `main` without the per-workgroup wall sums (a tree of barriers per wall) and the contact
// counts, for the steps whose wall forces and counts nobody reads: all but the last of a batch.
@compute @workgroup_size(WG)
fn forces_only(@builtin(global_invocation_id) gid: vec3<u32>) {
    forces_of(gid.x);
}

// The forces on the particle at `local` in the chunk (none past its end), without sums.
fn forces_of(local: u32) {
    var wall_f: array<vec4<f32>, MAX_WALLS>;
    var wall_t: array<vec4<f32>, MAX_WALLS>;
    if local < chunk.count {
        particle(chunk.first + local, local, &wall_f, &wall_t, false);
    }
}

fn particle(
    i: u32,
    local: u32,
    wall_f: ptr<function, array<vec4<f32>, MAX_WALLS>>,
    wall_t: ptr<function, array<vec4<f32>, MAX_WALLS>>,
    // Whether to add the contact counts to the workgroup's (`main` writes them to `stats`):
    // only the last step of a batch, the one whose counts `wall_reduce.stats_main` sums and
    // the host reads.
    with_stats: bool,
) {
    let pi = position_of(pos[i]);
    var force = params.gravity.xyz * pi.lo.w;
    var torque = vec3<f32>(0.0);
    var n_pairs = 0u;
    var n_walls = 0u;
    var n_sliding = 0u;
    var elastic = 0.0;
    var dissipated = 0.0;

    let base = local * params.slots;  // slots of this chunk
    let n_slots = min(count[i], params.slots);
    // This particle's own data, loaded once: each pair loads only its partner's and picks A
    // and B from the two.
    let vi = vec4_of(vel[i]);
    let r_lo_i = fine[i].w;
    let qi = predicted_of(pred[i]);
    let wi = spin_of(vi, qi);
    // ONE_MATERIAL, THE_MATERIAL (set where the kernel is compiled): every particle is of
    // that material, which is then neither loaded here nor for a partner.
    var mat_i = THE_MATERIAL;
    if !ONE_MATERIAL {
        mat_i = material[i];
    }
    // In a periodic cell: L for the affine field's velocity, and Love–Weber's sum Σ f ⊗ d of
    // this particle's wall contacts and A sides.
    let periodic = params.periodic != 0u;
    var stress_sum = mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    var l_cell = stress_sum;
    if periodic {
        l_cell = cell.head.l;
    }
    // The walls within the skin at the last build, each with its own slot of the particle's
    // row: the one at the wall's rank among them (`rebuild.walls_near` keeps the slots there
    // when the set changes), which holds the contact's history or `NO_WALL`. Most particles
    // have no wall within their skin, hence no row: nothing is read or written for them.
    // (A slot is found by rank rather than copied out and searched for: a per-invocation
    // copy of the row in a private array cost more than the rest of the kernel on lavapipe.)
    // (Compiled out where the scene has no walls: `WALLS_PRESENT`.)
    let ws = params.wall_slots;
    var near = 0u;
    if WALLS_PRESENT {
        near = wall_mask[i];
    }
    var row = NO_ROW;
    if near != 0u {
        row = wall_row[i];
    }
    let wbase = row * ws;
    var rank = 0u;
    while near != 0u {
        let w = firstTrailingBit(near);  // ascending wall order, as the ranks
        near &= near - 1u;
        let k = rank;
        rank += 1u;
        let held = row != NO_ROW && k < ws;
        let wall = walls[w];
        let rel = ds_diff(Position(wall.point_hi, wall.point_lo), pi, params.one);  // x − wall point
        var hit = false;
        var overlap = 0.0;
        var normal = wall.normal.xyz;
        // A plane, or a plate's face (the sphere's centre within the plate's outline): the
        // distance along the normal, on the side the sphere is. A plate's edge or corner: the
        // distance to the closest point, in f32.
        var face = wall.kind == WALL_PLANE;
        if wall.kind == WALL_PLATE {
            let gap = plate_gap(wall, rel);
            let dn = length(gap);
            hit = dn < pi.hi.w;
            overlap = pi.hi.w - dn;
            if dn > 0.0 {
                normal = gap / dn;
            }
            face = over_plate_face(wall, rel);
            if face {
                normal = wall.normal.xyz * select(-1.0, 1.0, dot(rel, wall.normal.xyz) >= 0.0);
            }
        }
        if face {
            let dn = dot(rel, normal);
            hit = dn < pi.hi.w && dn > -pi.hi.w;
            // R − n·(x − p) from the parts of the double-single difference and of the radius:
            // the hi part's projection is within a factor 2 of R at contact, so R − it is
            // exact (Sterbenz), and the overlap keeps precision relative to itself rather than
            // to R (one ulp of a 5 mm radius is 0.5 % of a 1e-7 m overlap). The wall slot's
            // two-part tangential history answers the smooth normal force this gives without
            // creeping.
            let rel_hi = (pi.hi.xyz - wall.point_hi.xyz) * params.one;
            let rel_lo = pi.lo.xyz - wall.point_lo.xyz;
            overlap = (pi.hi.w - dot(rel_hi, normal)) * params.one
                + (r_lo_i - dot(rel_lo, normal));
        }
        var prev = WallHead(make_slot(vec3<f32>(0.0), w), vec4<f32>(0.0));
        var had = false;  // in contact last step
        if held {
            let old = load_wall_slot(wbase + k);
            had = old.slot.partner == w;
            if had {
                prev = old;
            }
        }
        if !hit {
            if had {
                // The contact has ended: a later one starts afresh.
                store_wall_slot(wbase + k, make_slot(vec3<f32>(0.0), NO_WALL), vec3<f32>(0.0));
            }
            continue;
        }
        let r_p = -normal * (pi.hi.w - 0.5 * overlap);
        var rel_velocity = qi.v.xyz + cross(qi.w.xyz, r_p) - wall.velocity.xyz;
        var rel_motion = vi.xyz + cross(wi, r_p) - wall.velocity.xyz;
        if periodic {
            // A wall does not deform with the cell: the sphere's affine velocity L (x − origin)
            // moves it along the wall too (CPU twin: `compute_forces`).
            let affine = l_cell * from_origin(pi, cell.head, params.one);
            rel_velocity += affine;
            rel_motion += affine;
        }
        let rel_displacement = rel_motion * params.dt;
        let rec = pair_table[wall.material * params.n_materials + mat_i];
        // A wall is body A with infinite radius and mass.
        // A Jäger history's points are read and written in the wall slot (nowhere without one).
        let at = select(NOWHERE, IN_WALL_SLOTS | (wbase + k), held);
        let out = evaluate_pair(rec, prev.slot, at, prev.lo.xyz, overlap, normal, rel_velocity,
            rel_displacement, 0.5 * dot(wi, normal) * params.dt, qi.w.xyz, wi * params.dt, 1e30,
            pi.hi.w, 1e30, pi.lo.w, pi.lo.w, pi.hi.w);
        force += out.force;
        torque += cross(r_p, out.force);
        if uses_rolling() {
            torque += out.torque;
        }
        if held {
            store_wall_slot(wbase + k, out.slot, out.lo);
        } else {
            // `rebuild.walls_near` sized the rows for every wall within the skin at the last
            // build, and `walls_alloc` gave each particle with such a wall a row: a contact
            // without a slot is a defect, reported as one.
            atomicOr(&counters.failed, FAILED_DEFECT);
        }
        if periodic {
            stress_sum += outer(out.force, -r_p);  // d from the contact point to the centre
        }
        (*wall_f)[w] = vec4<f32>(-out.force, 0.0);
        var wall_torque = cross(rel + r_p, -out.force);
        if uses_rolling() {
            wall_torque -= out.torque;
        }
        (*wall_t)[w] = vec4<f32>(wall_torque, 0.0);
        n_walls += 1u;
        n_sliding += out.sliding;
        elastic += out.elastic;
        dissipated += out.dissipated;
    }

    // The pair record of two particles of this one's material, loaded once: most pairs have
    // it. Loaded per pair, the record cost about a sixth of the stage on lavapipe (which
    // gathers a load at a per-invocation index lane by lane, word by word, on Mesa 22.3). Of
    // one material, its index is the same for every invocation, and lavapipe loads it once.
    let rec_same = pair_table[mat_i * params.n_materials + mat_i];
    let once = pairs_once();
    for (var s = 0u; s < n_slots; s++) {
        let slot = load_slot(base + s);
        let j = partner_index(slot.partner);
        // Canonical order by stable id (the slot's `A_SIDE` bit): it fixes which body is A, and
        // so the sign of the stored history, whatever order the particles currently sit in.
        // The pair is evaluated in that order on both sides without choosing between the two
        // bodies' vectors: each vector from A to B, or of B relative to A, is `sign` times the
        // one from this particle to its partner, and a negation is exact (IEEE rounding is
        // symmetric in sign), so both sides still compute bit-identical forces.
        let i_first = (slot.partner & A_SIDE) != 0u;
        if once && !i_first {
            break;  // the B sides, listed after the A sides: their A sides hand them their share
        }
        let sign = select(-1.0, 1.0, i_first);
        let pj = position_of(pos[j]);
        let r_i = pi.hi.w;
        let r_j = pj.hi.w;
        let m_i = pi.lo.w;
        let m_j = pj.lo.w;
        let ra = select(r_j, r_i, i_first);
        let rb = select(r_i, r_j, i_first);
        let ma = select(m_j, m_i, i_first);
        let mb = select(m_i, m_j, i_first);
        var gap: SphereGap;
        var d: vec3<f32>;
        if periodic {
            // A and B in canonical order, B moved to its image nearest A (double-single), so
            // that both sides compute the same bits.
            var pa = pi;
            var pb = pj;
            if !i_first {
                pa = pj;
                pb = pi;
            }
            let c = cell.steps[cell_entry(counters.base_lo, atomicLoad(&counters.steps),
                params.cell_first_lo)];
            let k = round(c.inv * ds_diff(pa, pb, params.one));
            if any(k != vec3<f32>(0.0)) {
                let b = ds_sub(pb.hi.xyz, pb.lo.xyz, cell_shift(c, k, params.one), params.one);
                pb = Position(vec4<f32>(b.hi.xyz, pb.hi.w), vec4<f32>(b.lo.xyz, pb.lo.w));
            }
            gap = sphere_gap(pa, pb, ra, rb, r_lo_i + fine[j].w, params.one);
            d = gap.d;
        } else {
            gap = sphere_gap(pi, pj, ra, rb, r_lo_i + fine[j].w, params.one);
            d = gap.d * sign;  // from A to B
        }
        let dist = gap.dist;
        let overlap = gap.overlap;
        var mat_j = mat_i;
        if !ONE_MATERIAL {
            mat_j = material[j];
        }
        var rec = rec_same;
        if mat_j != mat_i {
            rec = pair_table[select(mat_j, mat_i, i_first) * params.n_materials
                + select(mat_i, mat_j, i_first)];
        }
        let aux = slot_aux(slot);
        // A wet hill contact acts across a gap (its liquid bridge); every other one only while
        // the spheres overlap.
        let bridged = uses_model(MODEL_HILL) && rec.model == MODEL_HILL && bitcast<u32>(aux.x) == MOISTURE_WET;
        if overlap <= 0.0 && !bridged {
            // A later contact starts afresh.
            store_slot(base + s, make_slot(vec3<f32>(0.0), slot.partner));
            if once {
                let h = 2u * link[base + s];
                hand[h] = vec4_words(vec4<f32>(0.0));
                hand[h + 1u] = vec4_words(vec4<f32>(0.0));
            }
            continue;
        }
        var normal = vec3<f32>(0.0, 0.0, 1.0);
        if dist > 0.0 {
            normal = d / dist;
        }
        let r_a = normal * (ra - 0.5 * overlap);
        let r_b = -normal * (rb - 0.5 * overlap);
        // The lever arms of this particle and of its partner.
        let lever_i = select(r_b, r_a, i_first);
        let lever_j = select(r_a, r_b, i_first);
        let qj = predicted_of(pred[j]);
        let vj4 = vec4_of(vel[j]);
        let vj = vj4.xyz;
        let wj = spin_of(vj4, qj);
        // B relative to A: `sign` times the partner relative to this particle.
        var rel_velocity = ((qj.v.xyz + cross(qj.w.xyz, lever_j))
            - (qi.v.xyz + cross(qi.w.xyz, lever_i))) * sign;
        let moved = ((vj + cross(wj, lever_j)) - (vi.xyz + cross(wi, lever_i))) * sign;
        var rel_displacement = moved * params.dt;
        if periodic {
            // Velocities are fluctuations about the affine field, which differs by L d
            // across the pair (CPU twin: `affine` in `compute_forces`).
            let affine = l_cell * d;
            rel_velocity += affine;
            rel_displacement = (moved + affine) * params.dt;
        }
        let twirl = 0.5 * dot(wi + wj, normal) * params.dt;
        // B's spin relative to A's, at t_n and over the last step (rolling resistance).
        let rel_spin = (qj.w.xyz - qi.w.xyz) * sign;
        let rel_rotation = ((wj - wi) * sign) * params.dt;
        let m_eff = ma * mb / (ma + mb);
        let r_eff = ra * rb / (ra + rb);
        // Neighbour slots keep a single-f32 history (no low part).
        let out = evaluate_pair(rec, slot, base + s, vec3<f32>(0.0), overlap, normal, rel_velocity,
            rel_displacement, twirl, rel_spin, rel_rotation, ra, rb, ma, mb, m_eff, r_eff);
        // The two shares: `out.force` on B with its torque about B's centre (B's lever arm is
        // `lever_j` on A's side), the opposite on A (and so the rolling torque), each torque as
        // one term. B's is the one expression whether B adds it here or A hands it over
        // (`hand`, below): written otherwise (as `out.force * -sign`, say), the compiler may
        // contract it otherwise, and the bits differ.
        var torque_b = cross(select(lever_i, lever_j, i_first), out.force);
        var torque_a = cross(select(lever_j, lever_i, i_first), -out.force);
        if uses_rolling() {
            torque_b += out.torque;
            torque_a -= out.torque;
        }
        force += select(out.force, -out.force, i_first);
        torque += select(torque_b, torque_a, i_first);
        // The pair is counted on A's side; its contact work counts on B's.
        if i_first {
            n_pairs += select(0u, 1u, overlap > 0.0);
            n_sliding += out.sliding;
            if periodic {
                stress_sum += outer(out.force, d);
            }
        } else {
            elastic += out.elastic;
            dissipated += out.dissipated;
        }
        if once {
            // Evaluated on A's side only: B's share, with the pair's contact work.
            let h = 2u * link[base + s];
            hand[h] = vec4_words(vec4<f32>(out.force, out.elastic));
            hand[h + 1u] = vec4_words(vec4<f32>(torque_b, out.dissipated));
        }
        store_slot(base + s, out.slot);
    }

    // Evaluating pairs once, the contact work of this particle's B sides is still to come
    // (`integrate` adds it): this step's work so far waits in the w words.
    var work_so_far = vec2<f32>(0.0);
    if SLOT_WORDS >= 8u {
        if once {
            work_so_far = vec2<f32>(elastic, dissipated);
        } else {
            add_work(i, elastic, dissipated);
        }
    }
    ft[i] = force_torque_words(ForceTorque(vec4<f32>(force, work_so_far.x),
        vec4<f32>(torque, work_so_far.y)));
    if periodic {
        cell_stress[i] = stress_sum;
    }
    if with_stats {
        if n_pairs != 0u {
            atomicAdd(&red_stats[0], n_pairs);
        }
        if n_walls != 0u {
            atomicAdd(&red_stats[1], n_walls);
        }
        if n_sliding != 0u {
            atomicAdd(&red_stats[2], n_sliding);
        }
    }
}

// f ⊗ d (column j is f d_j), a term of Love–Weber's sum.
fn outer(f: vec3<f32>, d: vec3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(f * d.x, f * d.y, f * d.z);
}

// The partner word of slot k of the chunk, loaded alone (in the 64-bit words, the high half of
// the second word).
@if(words64 && !slot_jager)
fn slot_partner(k: u32) -> u32 {
    return u32(slots[k].y >> 32u);
}
@if(!words64 || slot_jager)
fn slot_partner(k: u32) -> u32 {
    return slots[k].partner;
}

// Particle i's contact work of this step: the elastic energy of its contacts after it, and the
// work they dissipated, added to the running total (in two parts, so that small steps' work is
// not lost against it). Wide slots only.
fn add_work(i: u32, elastic: f32, dissipated: f32) {
    let w = vec4_of(work[i]);
    let t = two_sum(vec3<f32>(w.y, 0.0, 0.0), vec3<f32>(dissipated, 0.0, 0.0), params.one);
    let total = fast_two_sum(t.hi.xyz, t.lo.xyz + vec3<f32>(w.z, 0.0, 0.0), params.one);
    work[i] = vec4_words(vec4<f32>(elastic, total.hi.x, total.lo.x, 0.0));
}

// Adds to particle i's force and torque of this step (`contact_forces`'s, with this step's
// contact work so far in the w words) what its partners handed to its B sides, in list order,
// where pairs are evaluated once, and accounts the step's contact work; unchanged otherwise.
// `integrate` calls it before moving the particle.
fn with_handed(i: u32, own: ForceTorque) -> ForceTorque {
    if !pairs_once() {
        return own;
    }
    var force = own.force.xyz;
    var torque = own.torque.xyz;
    var elastic = own.force.w;
    var dissipated = own.torque.w;
    let base = i * params.slots;  // one chunk, from particle 0
    // The B sides, in list order (after the A sides, neighbours.wgsl): the order in which the
    // contact kernel adds them where both sides evaluate a pair, so that both give the same bits.
    let n_slots = min(count[i], params.slots);
    for (var s = 0u; s < n_slots; s++) {
        let k = base + s;
        if (slot_partner(k) & A_SIDE) != 0u {
            continue;
        }
        let f = vec4_of(hand[2u * k]);
        let t = vec4_of(hand[2u * k + 1u]);
        force += f.xyz;
        torque += t.xyz;
        elastic += f.w;
        dissipated += t.w;
    }
    if SLOT_WORDS >= 8u {
        add_work(i, elastic, dissipated);
    }
    return ForceTorque(vec4<f32>(force, 0.0), vec4<f32>(torque, 0.0));
}

struct PairOut {
    force: vec3<f32>,   // on B
    sliding: u32,
    slot: Slot,         // the contact's new history
    lo: vec3<f32>,      // the low part of its tangential history (wall slots)
    elastic: f32,       // energy stored in the contact after the step (J; Kuhn, hill)
    dissipated: f32,    // work dissipated in it during the step (J; Kuhn, hill)
    torque: vec3<f32>,  // rolling resistance torque on B (spring–dashpot pairs that have it)
}

// Whether some pair of the scene uses model `m` (`PairRecord::model`); `MODELS_PRESENT` is set
// when the kernel is compiled (shaders.rs), so the models no pair uses are compiled out.
fn uses_model(m: u32) -> bool {
    return (MODELS_PRESENT & (1u << m)) != 0u;
}

// Whether some pair has rolling resistance (compiled out otherwise, as the models are).
fn uses_rolling() -> bool {
    return (MODELS_PRESENT & ROLLING_PRESENT) != 0u;
}

// Neighbour slot k's head (`Slot`), and writing it back: a Jäger slot's field by field, its
// points staying where they are (`package::slot_tables` reads and writes them).
@if(!slot_jager)
fn load_slot(k: u32) -> Slot {
    return slot_of(slots[k]);
}
@if(!slot_jager)
fn store_slot(k: u32, s: Slot) {
    slots[k] = slot_words(s);
}
@if(slot_jager)
fn load_slot(k: u32) -> Slot {
    let w = &slots[k];
    return Slot((*w).tangential, (*w).partner, (*w).aux, (*w).frame);
}
@if(slot_jager)
fn store_slot(k: u32, s: Slot) {
    let w = &slots[k];
    (*w).tangential = s.tangential;
    (*w).partner = s.partner;
    (*w).aux = s.aux;
    (*w).frame = s.frame;
}

// Wall slot k's head and the low part of its history (`WallHead`), the same way.
struct WallHead {
    slot: Slot,
    lo: vec4<f32>,
}
@if(!slot_jager)
fn load_wall_slot(k: u32) -> WallHead {
    let w = wall_slots[k];
    return WallHead(w.slot, w.lo);
}
@if(!slot_jager)
fn store_wall_slot(k: u32, s: Slot, lo: vec3<f32>) {
    wall_slots[k] = WallSlot(s, vec4<f32>(lo, 0.0));
}
@if(slot_jager)
fn load_wall_slot(k: u32) -> WallHead {
    let w = &wall_slots[k].slot;
    return WallHead(Slot((*w).tangential, (*w).partner, (*w).aux, (*w).frame), wall_slots[k].lo);
}
@if(slot_jager)
fn store_wall_slot(k: u32, s: Slot, lo: vec3<f32>) {
    let w = &wall_slots[k].slot;
    (*w).tangential = s.tangential;
    (*w).partner = s.partner;
    (*w).aux = s.aux;
    (*w).frame = s.frame;
    wall_slots[k].lo = vec4<f32>(lo, 0.0);
}

// One contact with the pair's model: the scene's spring–dashpot (`contact_force`), Kuhn's
// linear contact, the hill model (models.wgsl, state in the slot's `aux` words: Kuhn keeps
// the last overlap, hill its moisture state) or Jäger's (its history in Jäger slots). Radii and masses of a wall are 1e30.
// CPU twin: `contact::model::evaluate`.
fn evaluate_pair(rec: PairRecord, slot: Slot, at: u32, lo: vec3<f32>, overlap: f32, normal: vec3<f32>,
                 rel_velocity: vec3<f32>, rel_displacement: vec3<f32>, twirl: f32,
                 rel_spin: vec3<f32>, rel_rotation: vec3<f32>,
                 r_a: f32, r_b: f32, m_a: f32, m_b: f32, m_eff: f32, r_eff: f32) -> PairOut {
    if uses_model(MODEL_LINEAR) && rec.model == MODEL_LINEAR {
        var kn = rec.kn;
        var kt = rec.kt;
        if (rec.flags & LINEAR_DEFORMABILITY) != 0u {
            // PFC deformability: k_n = π r² E*/L with r = min radius, L = R_a + R_b (R against a wall).
            let r = min(r_a, r_b);
            var l = r_a + r_b;
            if max(r_a, r_b) >= 1e29 {
                l = r;
            }
            kn = 3.14159265 * r * r * rec.e_star / l;
            kt = kn / rec.damping;
        }
        var st = KuhnState(slot.tangential, slot_aux(slot).x);
        var st_lo = lo;
        let o = kuhn_step(&st, &st_lo, overlap, normal, rel_displacement, twirl,
            KuhnParams(kn, kt, rec.friction, rec.flags & LINEAR_TWIRL), params.one);
        return PairOut(o.force, o.slid, with_aux(make_slot(st.tangential, slot.partner),
            vec4<f32>(st.overlap, 0.0, 0.0, 0.0)), st_lo, o.elastic, o.dissipated, vec3<f32>(0.0));
    }
    if uses_model(MODEL_HILL) && rec.model == MODEL_HILL {
        var st = HillState(slot.tangential, bitcast<u32>(slot_aux(slot).x));
        let hp = hill_params(rec.e_star, rec.g_star, r_a, r_b, m_a, m_b, rec.damping, rec.friction,
            rec.suction);
        let o = hill_step(&st, -overlap, normal, rel_velocity, rel_displacement, twirl, hp);
        return PairOut(o.force, o.slid, with_aux(make_slot(st.shear, slot.partner),
            vec4<f32>(bitcast<f32>(st.moisture), 0.0, 0.0, 0.0)), vec3<f32>(0.0), o.elastic,
            o.dissipated, vec3<f32>(0.0));
    }
    if uses_model(MODEL_JAGER) && rec.model == MODEL_JAGER {
        // Jäger: the history stack and contact frame live in the slot (Jäger slots only). The
        // pair radius R = 2 r_a r_b / (r_a + r_b) = 2 R*, and 2R against a wall of the same
        // constants (`contact::jager::JagerParams::new`).
        var st = jager_head_state(slot, at);
        let radius = 2.0 * r_eff;
        let jp = JagerParams(rec.kn, rec.kt, rec.friction, radius, rec.dp_max, rec.flags, 0u, 0u);
        let o = jager_step(&st, overlap, normal, rel_displacement, twirl, jp);
        let sliding = o.normal_force > 0.0
            && length(st.tangential) >= rec.friction * o.normal_force * (1.0 - 1e-6);
        return PairOut(o.force, select(0u, 1u, sliding), jager_head(&st, slot), vec3<f32>(0.0),
            0.0, 0.0, vec3<f32>(0.0));
    }
    let p = contact_params(rec, params.law, m_eff, r_eff);
    let out = contact_force(params.law, params.history, overlap, normal, rel_velocity,
        rel_displacement, slot.tangential, lo, params.one, p);
    var next = make_slot(out.tangential, slot.partner);
    var torque = vec3<f32>(0.0);
    if uses_rolling() && rec.rolling != ROLLING_NONE {
        // CPU twin: `contact::model::spring_rolling`. k_n = dF_n/dδ: k_n (Hooke), 3/2 k_n f
        // (Hertz); R_r = R* (R against a wall), I_r from both bodies (a wall adds nothing).
        var kn_tangent = p.kn;
        if params.law == LAW_HERTZ {
            kn_tangent = 1.5 * p.kn * law_factor(params.law, r_eff, overlap);
        }
        let inertia = 1.0 / (inv_rolling_inertia(r_a, m_a) + inv_rolling_inertia(r_b, m_b));
        let ro = rolling_torque(rec.rolling, rec.rolling_friction, rec.rolling_stiffness,
            rec.rolling_damping, r_eff, inertia, slot_aux(slot).xyz, normal, rel_spin,
            rel_rotation, out.normal_force, kn_tangent);
        torque = ro.torque;
        if rec.rolling == ROLLING_EPSD {
            next = with_aux(next, vec4<f32>(ro.spring, 0.0));
        }
    }
    return PairOut(out.force, out.sliding, next, out.tangential_lo, 0.0, 0.0, torque);
}
