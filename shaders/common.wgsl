// common.wgsl — `package::common`, which every kernel imports from (composed by WESL in
// `wgdem-gpu::shaders`).
//
// Layouts mirrored by the `#[repr(C)]` structs of `crates/wgdem-gpu/src/layout.rs` (a test checks
// sizes with naga), the double-single position arithmetic, the cell hash, and the contact law:
// `contact_params` and `contact_force` are the twins of `PairParams::contact_params` and
// `contact::contact_force` in `crates/wgdem-core`, with the same argument order.

import package::shared::{A_SIDE, DAMPING_TSUJI, HISTORY_PSEUDO, HISTORY_TRUE, LAW_HERTZ, NO_WALL};
import package::spec::{JAGER_POINTS};

struct SimParams {
    n: u32,
    slots: u32,          // neighbour slots per particle (K)
    n_walls: u32,
    n_materials: u32,
    table_bits: u32,     // hash table of 2^table_bits buckets
    law: u32,            // LAW_HOOKE or LAW_HERTZ
    history: u32,        // HISTORY_TRUE, HISTORY_PSEUDO or HISTORY_NONE
    n_tiles: u32,        // radix-sort tiles of RADIX_TILE keys
    dt: f32,
    cell_size: f32,
    skin: f32,
    one: f32,            // 1.0, read at run time: keeps compilers from simplifying TwoSum away
    gravity: vec4<f32>,
    rebuild_every_step: u32, // 1: rebuild the lists every step (tests)
    chunk_particles: u32,    // particles per slot chunk
    chunks: u32,             // slot chunks
    wall_slots: u32,         // wall slots per particle
    local_damping: f32,      // α of the local (non-viscous) damping
    bridge_reach: f32,       // extra neighbour reach for liquid bridges (m)
    n_drives: u32,           // drives ([[loads]]); 0: `integrate` looks none up
    max_speed_sq: f32,       // a sphere faster than √ of this is blown up (m²/s²)
    periodic: u32,           // 1: the scene has a periodic cell (`Cell`)
    cell_first_lo: u32,      // the step of `Cell.steps[0]` (low word; steps are counted
    cell_first_hi: u32,      // as in `Counters`, base + begun − 1)
    cell_steps: u32,         // entries in `Cell.steps`
}

// The particles [first, first + count) whose neighbour slots live in one buffer: the slot
// tables are split so that no binding exceeds the device's limit.
struct Chunk {
    first: u32,
    count: u32,
    once: u32,  // each pair evaluated once, by its A side (contact_forces.wgsl); one chunk only
    _p1: u32,
}

// Constants of a material pair (`layout::PairRecord`). `model`: MODEL_SPRING the scene's
// spring–dashpot, MODEL_LINEAR Kuhn's linear (`flags` bit 0: twirl, bit 1: PFC deformability with E* in e_star and κ* in
// damping, else kn and kt), MODEL_HILL (E_e in e_star, G_e in g_star, α_h in damping, ψ in suction).
struct PairRecord {
    elastic: u32,
    model: u32,
    flags: u32,
    dashpot: u32,       // DAMPING_VISCOELASTIC or DAMPING_TSUJI (spring–dashpot)
    kn: f32,
    kt: f32,
    gamma_n: f32,
    gamma_t: f32,
    friction: f32,
    e_star: f32,
    g_star: f32,
    damping: f32,
    v_char: f32,
    suction: f32,
    dp_max: f32,         // Jäger: |Δp_max| (MODEL_JAGER: kn = Ē, kt = κ, flags = capacity)
    _q2: f32,
    rolling: u32,              // ROLLING_NONE, ROLLING_CDT or ROLLING_EPSD (spring–dashpot)
    rolling_friction: f32,     // μ_r
    rolling_stiffness: f32,    // k_r (N·m/rad); 0: 2.25 k_n μ_r² R_r²
    rolling_damping: f32,      // η_r
}

struct Wall {
    kind: u32,           // WALL_PLANE or WALL_PLATE
    material: u32,
    schedule_first: u32, // its velocity schedule in the schedule points (integrate.wgsl)
    schedule_count: u32, // 0: `velocity`, set by the host
    point_hi: vec4<f32>, // plane point or plate centre, double-single
    point_lo: vec4<f32>,
    normal: vec4<f32>,
    u_axis: vec4<f32>,
    extents: vec4<f32>,  // plate half extents in .xy
    velocity: vec4<f32>,
}

// From a plate's closest point to a point at `rel` from its centre (zero inside its outline).
fn plate_gap(wall: Wall, rel: vec3<f32>) -> vec3<f32> {
    let v_axis = cross(wall.normal.xyz, wall.u_axis.xyz);
    let cu = clamp(dot(rel, wall.u_axis.xyz), -wall.extents.x, wall.extents.x);
    let cv = clamp(dot(rel, v_axis), -wall.extents.y, wall.extents.y);
    return rel - wall.u_axis.xyz * cu - v_axis * cv;
}

// Whether a wall has moved more than half the skin since the last build (its point then, in
// double-single `built_hi` + `built_lo`): the walls within a particle's skin at the build may
// no longer be the only ones it can touch, so the lists are rebuilt.
fn wall_moved(wall: Wall, built_hi: vec4<f32>, built_lo: vec4<f32>, skin: f32) -> bool {
    let limit = 0.5 * skin;
    let d = (wall.point_hi.xyz - built_hi.xyz) + (wall.point_lo.xyz - built_lo.xyz);
    return dot(d, d) > limit * limit;
}

// Whether a point at `rel` from a plate's centre lies over the plate's face (within its
// outline), where its closest point is straight along the normal.
fn over_plate_face(wall: Wall, rel: vec3<f32>) -> bool {
    let v_axis = cross(wall.normal.xyz, wall.u_axis.xyz);
    return abs(dot(rel, wall.u_axis.xyz)) <= wall.extents.x && abs(dot(rel, v_axis)) <= wall.extents.y;
}

// Position as double-single (hi + lo); hi.w is the radius.
struct Position {
    hi: vec4<f32>,
    lo: vec4<f32>,
}

// Velocities predicted at t_n for the dashpots (see contact::RelativeMotion).
struct Predicted {
    v: vec4<f32>,
    w: vec4<f32>,
}

// The angular velocity ω_{n−1/2}, whose copy `integrate` keeps in the spare w words of a
// particle's velocity (x) and predicted velocities (y in `v.w`, z in `w.w`): a pair then loads
// its partner's spin with the velocities it needs anyway, not from a third array.
fn spin_of(vel: vec4<f32>, pred: Predicted) -> vec3<f32> {
    return vec3<f32>(vel.w, pred.v.w, pred.w.w);
}

// One neighbour slot: the partner (its index, with `A_SIDE` set where this particle is the
// pair's body A) and this side's copy of the pair's tangential history.
// A narrow slot (16 bytes) holds the spring–dashpot history; a wide one (`slot_wide`, 32
// bytes) four words of model state (`aux`) for the Kuhn and hill models and type C rolling;
// a Jäger slot (`slot_jager`) a wide one plus the contact frame, the tangential force in the
// contact frame and the point count in `tangential`, and in storage (`JagerSlot`) its
// `JAGER_POINTS` history points after them.
// `SLOT_WORDS` (package::spec) is the slot's size in u32 words.
// `Slot` is the value a kernel carries: a Jäger slot's head without its points, which stay in
// storage and are read and written there one at a time (`package::slot_tables`).
// Carried whole, a 32-point slot was copied half a kilobyte at a time through every load,
// constructor and return, which lavapipe compiled into minutes of LLVM and ran lane by lane.
struct Slot {
    tangential: vec3<f32>,
    partner: u32,
    @if(slot_wide || slot_jager) aux: vec4<f32>,
    @if(slot_jager) frame: vec4<f32>,
}
// A Jäger slot as stored: the head (`Slot`'s fields) and the history points (ζ*, F*, p*ₓ, p*ᵧ);
// points at and past the count are not read (a contact that ends sets the count to 0 only).
@if(slot_jager)
struct JagerSlot {
    tangential: vec3<f32>,
    partner: u32,
    aux: vec4<f32>,
    frame: vec4<f32>,
    points: array<vec4<f32>, JAGER_POINTS>,
}
// A slot as stored in the neighbour and wall tables (the f32 struct form; `SlotWords` below
// is the contact kernels' form of the neighbour table).
@if(!slot_jager)
alias StoredSlot = Slot;
@if(slot_jager)
alias StoredSlot = JagerSlot;
@if(!slot_jager)
fn slot_head(s: StoredSlot) -> Slot {
    return s;
}
@if(slot_jager)
fn slot_head(s: StoredSlot) -> Slot {
    return Slot(s.tangential, s.partner, s.aux, s.frame);
}
@if(!slot_wide && !slot_jager)
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {
    return Slot(tangential, partner);
}
@if(slot_wide)
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {
    return Slot(tangential, partner, vec4<f32>(0.0));
}
@if(slot_jager)
fn make_slot(tangential: vec3<f32>, partner: u32) -> Slot {
    return Slot(tangential, partner, vec4<f32>(0.0), vec4<f32>(0.0));
}
@if(!slot_wide && !slot_jager)
fn slot_aux(s: Slot) -> vec4<f32> {
    return vec4<f32>(0.0);
}
@if(slot_wide || slot_jager)
fn slot_aux(s: Slot) -> vec4<f32> {
    return s.aux;
}
@if(!slot_wide && !slot_jager)
fn with_aux(s: Slot, aux: vec4<f32>) -> Slot {
    return s;
}
@if(slot_wide || slot_jager)
fn with_aux(s: Slot, aux: vec4<f32>) -> Slot {
    var out = s;
    out.aux = aux;
    return out;
}

// A neighbour slot's `partner` word: the partner's index in the low 31 bits, and in the top bit
// whether this particle is the pair's body A (the smaller stable id; set by `neighbours` from
// the ids, kept through reorders). The contact kernel takes the pair's canonical order from
// it instead of loading the partner's stable id at every step.
fn partner_index(partner: u32) -> u32 {
    return partner & ~A_SIDE;
}

// One wall slot: a neighbour slot plus the low part of its tangential history (xyz), so that a
// resting contact keeps the sub-ulp increments an f32 history would drop (see `two_sum`).
struct WallSlot {
    slot: StoredSlot,
    lo: vec4<f32>,
}

// An empty wall slot (no wall, no history), written whole where a row is emptied.
@if(!slot_jager)
fn empty_wall_slot() -> WallSlot {
    return WallSlot(make_slot(vec3<f32>(0.0), NO_WALL), vec4<f32>(0.0));
}
@if(slot_jager)
fn empty_wall_slot() -> WallSlot {
    return WallSlot(JagerSlot(vec3<f32>(0.0), NO_WALL, vec4<f32>(0.0), vec4<f32>(0.0),
        array<vec4<f32>, JAGER_POINTS>()), vec4<f32>(0.0));
}

struct ForceTorque {
    force: vec4<f32>,
    torque: vec4<f32>,
}

// How the per-step kernels (contacts, integration, the rebuild's wall pass) hold the per-particle
// arrays and the neighbour slots in storage: `XWords` is the stored form of `X`, `x_of` reads
// it and `x_words` writes it. First the types themselves; where the device has 64-bit integers
// (`words64`), the same bytes as 64-bit words, which lavapipe loads
// and stores with half as many per-lane instructions (it gathers a load at a per-invocation
// index lane by lane, one component at a time). The values are the same bit for bit.
@if(!words64)
alias Vec4Words = vec4<f32>;
@if(!words64)
alias PositionWords = Position;
@if(!words64)
alias PredictedWords = Predicted;
@if(!words64)
alias ForceTorqueWords = ForceTorque;
@if(!words64 && !slot_jager)
alias SlotWords = Slot;
@if(!words64)
alias U32x4Words = vec4<u32>;
@if(!words64)
fn u32x4_of(w: U32x4Words) -> vec4<u32> {
    return w;
}
@if(!words64)
fn u32x4_words(v: vec4<u32>) -> U32x4Words {
    return v;
}
@if(!words64)
fn vec4_of(w: Vec4Words) -> vec4<f32> {
    return w;
}
@if(!words64)
fn vec4_words(v: vec4<f32>) -> Vec4Words {
    return v;
}
@if(!words64)
fn position_of(w: PositionWords) -> Position {
    return w;
}
@if(!words64)
fn position_words(p: Position) -> PositionWords {
    return p;
}
@if(!words64)
fn predicted_of(w: PredictedWords) -> Predicted {
    return w;
}
@if(!words64)
fn predicted_words(p: Predicted) -> PredictedWords {
    return p;
}
@if(!words64)
fn force_torque_of(w: ForceTorqueWords) -> ForceTorque {
    return w;
}
@if(!words64)
fn force_torque_words(f: ForceTorque) -> ForceTorqueWords {
    return f;
}
@if(!words64 && !slot_jager)
fn slot_of(w: SlotWords) -> Slot {
    return w;
}
@if(!words64 && !slot_jager)
fn slot_words(s: Slot) -> SlotWords {
    return s;
}
// Jäger slots keep their struct form, read and written a field at a time by the contact
// kernels (contact_forces.wgsl `load_slot`, `store_slot`).
@if(slot_jager)
alias SlotWords = JagerSlot;
// The same as 64-bit words (`words64`, on devices with SHADER_INT64): each pair of u32 words
// one u64, low word first, as the bytes lie. Jäger slots keep their struct form.
@if(words64)
fn halves(x: u64) -> vec2<u32> {
    return vec2<u32>(u32(x), u32(x >> 32u));
}
@if(words64)
fn word64(h: vec2<u32>) -> u64 {
    return u64(h.x) | (u64(h.y) << 32u);
}
@if(words64)
alias U32x4Words = vec2<u64>;
@if(words64)
fn u32x4_of(w: U32x4Words) -> vec4<u32> {
    return vec4<u32>(halves(w.x), halves(w.y));
}
@if(words64)
fn u32x4_words(v: vec4<u32>) -> U32x4Words {
    return vec2<u64>(word64(v.xy), word64(v.zw));
}
@if(words64)
alias Vec4Words = vec2<u64>;
@if(words64)
fn vec4_of(w: Vec4Words) -> vec4<f32> {
    return bitcast<vec4<f32>>(u32x4_of(w));
}
@if(words64)
fn vec4_words(v: vec4<f32>) -> Vec4Words {
    return u32x4_words(bitcast<vec4<u32>>(v));
}
@if(words64)
alias PositionWords = vec4<u64>;
@if(words64)
fn position_of(w: PositionWords) -> Position {
    return Position(vec4_of(w.xy), vec4_of(w.zw));
}
@if(words64)
fn position_words(p: Position) -> PositionWords {
    return vec4<u64>(vec4_words(p.hi), vec4_words(p.lo));
}
@if(words64)
alias PredictedWords = vec4<u64>;
@if(words64)
fn predicted_of(w: PredictedWords) -> Predicted {
    return Predicted(vec4_of(w.xy), vec4_of(w.zw));
}
@if(words64)
fn predicted_words(p: Predicted) -> PredictedWords {
    return vec4<u64>(vec4_words(p.v), vec4_words(p.w));
}
@if(words64)
alias ForceTorqueWords = vec4<u64>;
@if(words64)
fn force_torque_of(w: ForceTorqueWords) -> ForceTorque {
    return ForceTorque(vec4_of(w.xy), vec4_of(w.zw));
}
@if(words64)
fn force_torque_words(f: ForceTorque) -> ForceTorqueWords {
    return vec4<u64>(vec4_words(f.force), vec4_words(f.torque));
}
@if(words64 && !slot_wide && !slot_jager)
alias SlotWords = vec2<u64>;
@if(words64 && !slot_wide && !slot_jager)
fn slot_of(w: SlotWords) -> Slot {
    let u = u32x4_of(w);
    return Slot(bitcast<vec3<f32>>(u.xyz), u.w);
}
@if(words64 && !slot_wide && !slot_jager)
fn slot_words(s: Slot) -> SlotWords {
    return u32x4_words(vec4<u32>(bitcast<vec3<u32>>(s.tangential), s.partner));
}
@if(words64 && slot_wide)
alias SlotWords = vec4<u64>;
@if(words64 && slot_wide)
fn slot_of(w: SlotWords) -> Slot {
    let u = u32x4_of(w.xy);
    return Slot(bitcast<vec3<f32>>(u.xyz), u.w, vec4_of(w.zw));
}
@if(words64 && slot_wide)
fn slot_words(s: Slot) -> SlotWords {
    return vec4<u64>(u32x4_words(vec4<u32>(bitcast<vec3<u32>>(s.tangential), s.partner)),
        vec4_words(s.aux));
}

// Overflow and capacity counters read back by the host.
struct Counters {
    failed: atomic<u32>,             // FAILED_* bits (shared.rs): a neighbour list, a particle's
                                     // wall slots or the wall table's rows overflowed, or a
                                     // wall was touched outside its skin (a defect)
    max_neighbours: atomic<u32>,     // largest neighbour count any particle needed
    max_wall_contacts: atomic<u32>,  // most walls within the skin of an overflowing particle
    steps: atomic<u32>,              // steps begun since the host cleared the counters
    base_lo: u32,                    // the host's step count when it cleared them (low,
    base_hi: u32,                    // high word): this step is base + steps − 1
    runaway: atomic<u32>,            // spheres with a non-finite or too fast state (integrate)
    first_runaway: atomic<u32>,      // their smallest stable id (cleared to 0xffffffff)
    end: u32,                        // `steps` at the end of the batch being run: no step
                                     // begins beyond it (`rebuild.plan`, `integrate.steps`)
    rounds: u32,                     // rounds of a single-workgroup batch not yet begun
}

// Whether the next step rebuilds the neighbour lists (`flag`, set by `integrate` or the host,
// consumed by `rebuild.plan`) and the builds so far.
struct RebuildState {
    flag: atomic<u32>,
    builds: atomic<u32>,
    built: u32,   // this step rebuilds the lists (`rebuild.plan`): `integrate` records positions
    _p0: u32,
}



// ---- double-single arithmetic -------------------------------------------------------------
// Shader compilers may treat float arithmetic as reassociable (Mesa's NIR rewrites
// b − ((a + b) − a) to 0), which would erase the rounding error these functions recover. Every
// error term therefore goes through a multiplication by `one`, a uniform equal to 1.0 that the
// compiler cannot see, so no algebraic identity applies.

// (sin x, cos x) to f32's rounding for a step's small turn (a spin's half-angle |ω|Δt/2, a
// contact's twirl about its normal): Vulkan lets a driver's `sin` and `cos` be off by 2⁻¹¹ in
// absolute terms, and NVIDIA's are off by about 5e-9 near zero, a relative 2e-5 of a
// 2.5e-4 rad half-turn that repeats in every step (seen on an H200: a sphere spun at 50 rad/s
// for 300 steps turned 1.9e-5 short). For |x| ≤ 0.5 the Taylor series to x⁹ and x⁸ (their
// next terms below 3e-10) in products and sums alone, which every adapter rounds correctly;
// beyond, the builtins. CPU twin: f64 `sin_cos`.
fn sin_cos(x: f32) -> vec2<f32> {
    if abs(x) > 0.5 {
        return vec2<f32>(sin(x), cos(x));
    }
    let x2 = x * x;
    let s = x * (1.0 - x2 * (1.0 / 6.0) * (1.0 - x2 * (1.0 / 20.0) * (1.0 - x2 * (1.0 / 42.0)
        * (1.0 - x2 * (1.0 / 72.0)))));
    let c = 1.0 - x2 * 0.5 * (1.0 - x2 * (1.0 / 12.0) * (1.0 - x2 * (1.0 / 30.0)
        * (1.0 - x2 * (1.0 / 56.0))));
    return vec2<f32>(s, c);
}

// Fast2Sum (Dekker): s + e == a + b exactly when |a| ≥ |b|.
fn fast_two_sum(a: vec3<f32>, b: vec3<f32>, one: f32) -> Position {
    let s = a + b;
    let e = b - (s * one - a);
    return Position(vec4<f32>(s, 0.0), vec4<f32>(e, 0.0));
}

// TwoSum (Knuth): s + e == a + b exactly, whatever the magnitudes. Used to accumulate a
// contact's tangential history in two parts: a resting contact's per-step increment can fall
// below half an ulp of its history (1e-13 m against 1.5e-4 m on a slope), and an f32 history
// would drop it every step, letting the contact creep while its spring stays put.
fn two_sum(a: vec3<f32>, b: vec3<f32>, one: f32) -> Position {
    let s = a + b;
    let a1 = s * one - b;
    let b1 = s * one - a1 * one;
    let e = (a - a1 * one) + (b - b1 * one);
    return Position(vec4<f32>(s, 0.0), vec4<f32>(e, 0.0));
}

// (hi, lo) + d with |d| ≤ |hi| (a step's displacement), renormalised so that lo stays below
// half an ulp of hi.
fn ds_add(hi: vec3<f32>, lo: vec3<f32>, d: vec3<f32>, one: f32) -> Position {
    let t = fast_two_sum(hi, d, one);
    let l = t.lo.xyz + lo;
    return fast_two_sum(t.hi.xyz, l, one);
}

// b − a for two double-single positions: the hi difference of nearby points is exact
// (Sterbenz), so the result keeps the full precision of the pair.
fn ds_diff(a: Position, b: Position, one: f32) -> vec3<f32> {
    return (b.hi.xyz - a.hi.xyz) * one + (b.lo.xyz - a.lo.xyz);
}

// TwoSum of two scalars: (s, e) with s + e == a + b exactly.
fn two_sum1(a: f32, b: f32, one: f32) -> vec2<f32> {
    let t = two_sum(vec3<f32>(a, 0.0, 0.0), vec3<f32>(b, 0.0, 0.0), one);
    return vec2<f32>(t.hi.x, t.lo.x);
}

// a² per component as p + e exactly (Dekker's product, without relying on a fused
// multiply–add, which WGSL does not promise): a is split into two halves of 12 bits, whose
// products are exact in f32.
fn two_square(a: vec3<f32>, one: f32) -> Position {
    let c = a * 4097.0;
    let a_hi = c - (c * one - a);
    let a_lo = a - a_hi * one;
    let p = a * a;
    let e = ((a_hi * a_hi - p * one) + 2.0 * a_hi * a_lo) + a_lo * a_lo;
    return Position(vec4<f32>(p, 0.0), vec4<f32>(e, 0.0));
}

// Two spheres at double-single positions `a` and `b` of radii `r_a` and `r_b` (f32) whose low
// parts add up to `radii_lo`: the vector from a to b (rounded), its length, and the
// overlap `radii − |b − a|`. The overlap is computed in double-single throughout: the
// difference of the positions as hi + lo (TwoSum), its squared length as hi + lo (exact squares,
// TwoSum), the length as √hi plus a Newton correction from the exact residual, and the radii's
// sum minus it (the hi parts of two lengths within a factor 2 subtract exactly, Sterbenz). A
// resting 5 mm quartz sphere overlaps its neighbour by 4.6e-8 m; in f32 the radius alone is
// off by 1.1e-10 m (0.25 % of it), here by ~1e-16 m. Symmetric in a and b to the bit (every
// step is exact or negates exactly), so both sides of a pair compute the same overlap.
struct SphereGap {
    d: vec3<f32>,
    dist: f32,
    overlap: f32,
}

fn sphere_gap(a: Position, b: Position, r_a: f32, r_b: f32, radii_lo: f32, one: f32) -> SphereGap {
    let h = two_sum(b.hi.xyz, -a.hi.xyz, one);
    let d = two_sum(h.hi.xyz, h.lo.xyz + (b.lo.xyz - a.lo.xyz), one);  // b − a = d.hi + d.lo
    let sq = two_square(d.hi.xyz, one);
    let s01 = two_sum1(sq.hi.x, sq.hi.y, one);
    let s = two_sum1(s01.x, sq.hi.z, one);
    let s_lo = (s01.y + s.y) + (sq.lo.x + sq.lo.y + sq.lo.z) + 2.0 * dot(d.hi.xyz, d.lo.xyz);
    let l0 = sqrt(s.x);
    var l_lo = 0.0;
    if l0 > 0.0 {
        let q = two_square(vec3<f32>(l0, 0.0, 0.0), one);
        l_lo = (((s.x - q.hi.x) * one + s_lo) - q.lo.x) / (2.0 * l0);
    }
    let radii = two_sum1(r_a, r_b, one);
    let r = two_sum1(radii.x, -l0, one);
    let overlap = r.x + (((r.y + radii.y) + radii_lo) - l_lo);
    return SphereGap(d.hi.xyz + d.lo.xyz, l0 + l_lo, overlap);
}

// ---- periodic cell --------------------------------------------------------------------------
// The periodic cell (`[cell]`; crates/wgdem-core/src/cell.rs has the conventions): a
// parallelepiped of edges H (columns) from a fixed origin, deforming with the velocity gradient
// L. The host computes the cell of every step of a run in f64, as the CPU reference advances it
// (`H ← exp(L Δt) H`), and writes them to `Cell.steps` before the run (engine/cell.rs): a
// kernel of step n reads entry n − first. Without a cell, `params.periodic` is 0 and nothing
// here is read.
struct CellStep {
    h_hi: mat3x3<f32>,  // H, the edges as columns (m): h_hi + h_lo, double-single
    h_lo: mat3x3<f32>,
    inv: mat3x3<f32>,   // H⁻¹ (1/m)
    bins: vec4<u32>,    // hash bins along each edge (xyz), each at least the reach wide
}

struct CellHead {
    l: mat3x3<f32>,          // L (1/s), constant over the run
    map: mat3x3<f32>,        // exp(L Δt) − I: a step's affine displacement is map (x − origin)
    origin_hi: vec4<f32>,    // the fixed corner, double-single
    origin_lo: vec4<f32>,
}

struct Cell {
    head: CellHead,
    built: CellStep,         // the cell at the last build (`rebuild.plan` copies it)
    steps: array<CellStep>,  // the cell at step params.cell_first + k
}

// Entry of `Cell.steps` for the step `begun` steps after the host's base (`Counters`): the
// difference of the low words is exact, the table being far shorter than 2³² steps.
fn cell_entry(base_lo: u32, begun: u32, first_lo: u32) -> u32 {
    return base_lo + begun - 1u - first_lo;
}

// x − origin of a double-single point (f32, relative to the cell's size).
fn from_origin(p: Position, head: CellHead, one: f32) -> vec3<f32> {
    return (p.hi.xyz - head.origin_hi.xyz) * one + (p.lo.xyz - head.origin_lo.xyz);
}

// The hash bin of a point of fractional coordinates `s` (`H⁻¹ (x − origin)`): ⌊s_k n_k⌋
// modulo n_k along edge k, so a point rounded just outside the cell lands in the bin it wraps
// to. CPU twin: `bin_of` in `broadphase::periodic_pairs_within`.
fn cell_bin(s: vec3<f32>, bins: vec4<u32>) -> vec3<i32> {
    let n = vec3<i32>(bins.xyz);
    let c = vec3<i32>(floor(s * vec3<f32>(bins.xyz)));
    return ((c % n) + n) % n;
}

// Whether the neighbour bin at offset `d` (−1, 0, 1) along an edge of `n` bins is one already
// visited: with two bins −1 and +1 are the same bin, with one every offset is bin 0.
fn bin_repeats(d: vec3<i32>, n: vec3<i32>) -> bool {
    return any((n == vec3<i32>(1)) & (d != vec3<i32>(0)))
        || any((n == vec3<i32>(2)) & (d == vec3<i32>(1)));
}

// H k in double-single for a whole-cell shift k (components −1, 0 or 1, so each product is
// exact): the columns summed with TwoSum, the low parts after.
fn cell_shift(c: CellStep, k: vec3<f32>, one: f32) -> Position {
    let a = two_sum(c.h_hi[0] * k.x, c.h_hi[1] * k.y, one);
    let b = two_sum(a.hi.xyz, c.h_hi[2] * k.z, one);
    let lo = (a.lo.xyz + b.lo.xyz) + c.h_lo * k;
    return two_sum(b.hi.xyz, lo, one);
}

// (hi, lo) − s in double-single (the radius and mass in w are the caller's to keep).
fn ds_sub(hi: vec3<f32>, lo: vec3<f32>, s: Position, one: f32) -> Position {
    let t = two_sum(hi, -s.hi.xyz, one);
    return two_sum(t.hi.xyz, t.lo.xyz + (lo - s.lo.xyz), one);
}

// ---- spatial hash ---------------------------------------------------------------------------
fn cell_of(p: Position, h: f32) -> vec3<i32> {
    return vec3<i32>(floor((p.hi.xyz + p.lo.xyz) / h));
}

// The bits of a cell's coordinates that `pack_cell` keeps: x and y modulo 2^11, z modulo 2^10.
const CELL_BITS = vec3<u32>(11u, 11u, 10u);

// A cell in one word, its coordinates modulo 2^CELL_BITS (`hash` stores it per particle). Two
// different cells less than 1024 apart along every axis pack to different words, so the 27
// cells around a particle's have 27 distinct words.
fn pack_cell(c: vec3<i32>) -> u32 {
    let u = bitcast<vec3<u32>>(c);
    return (u.x & 0x7ffu) | ((u.y & 0x7ffu) << 11u) | (u.z << 22u);
}

// The cell whose packed word is `packed` nearest to `near` (exact when the two are less than
// 512 cells apart along every axis): each coordinate is `near`'s plus the packed difference
// taken as a signed number of CELL_BITS bits.
fn unpack_cell_near(packed: u32, near: vec3<i32>) -> vec3<i32> {
    let m = vec3<u32>(packed & 0x7ffu, (packed >> 11u) & 0x7ffu, packed >> 22u);
    let shift = vec3<u32>(32u) - CELL_BITS;
    let d = (m - bitcast<vec3<u32>>(near)) << shift;
    return near + (bitcast<vec3<i32>>(d) >> shift);
}

// Teschner et al. (2003) hash, then Fibonacci hashing into 2^bits buckets (bits ≥ 1).
fn bucket_of(c: vec3<i32>, bits: u32) -> u32 {
    let h = (bitcast<u32>(c.x) * 73856093u) ^ (bitcast<u32>(c.y) * 19349663u)
        ^ (bitcast<u32>(c.z) * 83492791u);
    return (h * 0x9E3779B9u) >> (32u - bits);
}

// ---- contact law (Fleischmann et al. 2015, Eq. 1–6) ----------------------------------------
struct ContactParams {
    kn: f32,
    kt: f32,
    gamma_n: f32,
    gamma_t: f32,
    friction: f32,
    eff_mass: f32,
    eff_radius: f32,
    dashpot: u32,           // DAMPING_VISCOELASTIC or DAMPING_TSUJI
}

struct ContactOutcome {
    force: vec3<f32>,       // on body B
    normal_force: f32,
    tangential: vec3<f32>,  // new u_t
    sliding: u32,
    tangential_lo: vec3<f32>,  // low part of u_t (zero unless `u_t_lo` was given)
}

fn law_factor(law: u32, eff_radius: f32, overlap: f32) -> f32 {
    if law == LAW_HERTZ {
        return sqrt(eff_radius * overlap);
    }
    return 1.0;
}

// Twin of `PairParams::contact_params` (see material.rs for the mappings).
fn contact_params(rec: PairRecord, law: u32, eff_mass: f32, eff_radius: f32) -> ContactParams {
    var p = ContactParams(rec.kn, rec.kt, rec.gamma_n, rec.gamma_t, rec.friction, eff_mass, eff_radius,
        rec.dashpot);
    if rec.elastic == 1u {
        // The undamped Hertz maximum overlap at v_c is d* = x^0.4 with
        // x = 15 m* v_c² / (16 E* √R*); the law needs d*^1.5 = x^0.6 (Hertz) or
        // d*² = x^0.8 (Hooke), taken from x with one `pow` (the CPU twin goes through d*:
        // the same value to f32 rounding, at half the transcendental cost per pair).
        let v = rec.v_char;
        let sqrt_r = sqrt(eff_radius);
        let x = 15.0 * eff_mass * v * v / (16.0 * rec.e_star * sqrt_r);
        if law == LAW_HERTZ && rec.dashpot == DAMPING_TSUJI {
            // γ_n = b √(16 E* / (15 m*)), γ_t = γ_n √(4 G*/E*) (Tsuji et al. 1992).
            let g = rec.damping * sqrt(16.0 * rec.e_star / (15.0 * eff_mass));
            p.kn = 4.0 / 3.0 * rec.e_star;
            p.kt = 8.0 * rec.g_star;
            p.gamma_n = g;
            p.gamma_t = g * sqrt(4.0 * rec.g_star / rec.e_star);
        } else if law == LAW_HERTZ {
            let g = rec.damping * v / (sqrt_r * pow(x, 0.6));
            p.kn = 4.0 / 3.0 * rec.e_star;
            p.kt = 8.0 * rec.g_star;
            p.gamma_n = g;
            p.gamma_t = g;
        } else {
            let kn = eff_mass * v * v / pow(x, 0.8);
            let g = 2.0 * rec.damping * sqrt(kn / eff_mass);
            p.kn = kn;
            p.kt = 4.0 * rec.g_star / rec.e_star * kn;
            p.gamma_n = g;
            p.gamma_t = g;
        }
    }
    return p;
}

// Twin of `contact::contact_force`: force on B, normal from A to B, motion of B relative to A.
fn contact_force(
    law: u32,
    history: u32,
    overlap: f32,
    normal: vec3<f32>,
    rel_velocity: vec3<f32>,
    rel_displacement: vec3<f32>,
    u_t_prev: vec3<f32>,
    u_t_lo: vec3<f32>,      // low part of u_t_prev (zero where the history is a single f32)
    one: f32,               // 1.0 the compiler cannot see (see `two_sum`)
    p: ContactParams,
) -> ContactOutcome {
    let f = law_factor(law, p.eff_radius, overlap);
    let v_n = normal * dot(normal, rel_velocity);
    let v_t = rel_velocity - v_n;
    let step_t = rel_displacement - normal * dot(normal, rel_displacement);
    // The dashpots' factor relative to f: 1, or 1/√f for Tsuji's (`Damping::relative_factor`).
    var g = 1.0;
    if p.dashpot == DAMPING_TSUJI && f > 0.0 {
        g = 1.0 / sqrt(f);
    }
    let f_n = (normal * (p.kn * overlap) - v_n * (p.gamma_n * p.eff_mass * g)) * f;
    let normal_force = dot(f_n, normal);

    var u_t = vec3<f32>(0.0);
    var lo = vec3<f32>(0.0);
    if history == HISTORY_TRUE {
        // Eq. 4, the sum compensated: (u_t_prev + u_t_lo) + step_t as a high and a low part.
        let u_star = two_sum(u_t_prev, step_t + u_t_lo, one);
        u_t = u_star.hi.xyz - normal * dot(normal, u_star.hi.xyz);
        lo = u_star.lo.xyz - normal * dot(normal, u_star.lo.xyz);
    } else if history == HISTORY_PSEUDO {
        u_t = step_t;                            // Eq. 5
    }
    let damping_t = v_t * (p.gamma_t * p.eff_mass * g);
    var f_t = (-u_t * p.kt - damping_t) * f;

    let limit = p.friction * abs(normal_force);
    let ft_mag = length(f_t);
    var sliding = 0u;
    if ft_mag > limit {                          // Eq. 6
        sliding = 1u;
        var ratio = 0.0;
        if ft_mag > 0.0 {
            ratio = limit / ft_mag;
        }
        f_t = f_t * ratio;
        if history == HISTORY_TRUE && p.kt > 0.0 && f > 0.0 {
            u_t = -f_t / (f * p.kt);  // the spring alone carries the limit (contact::contact_force)
        }
        lo = vec3<f32>(0.0);
    }
    if history != HISTORY_TRUE {
        u_t = vec3<f32>(0.0);
    }
    return ContactOutcome(f_n + f_t, normal_force, u_t, sliding, lo);
}

// A one-workgroup scan of m entries by 256 invocations: invocation li's contiguous chunk
// [x, y) of them.
fn scan_chunk(li: u32, m: u32) -> vec2<u32> {
    let per = (m + 255u) / 256u;
    let begin = min(li * per, m);
    return vec2<u32>(begin, min(begin + per, m));
}

var<workgroup> scan_sums: array<u32, 256>;

// The exclusive prefix sum over the 256 invocations of a workgroup: each passes its chunk's
// sum `s` and gets the sum of the chunks before its own. Integer sums: the order cannot
// matter. Call in uniform control flow (it has barriers).
fn chunks_before(li: u32, s: u32) -> u32 {
    scan_sums[li] = s;
    workgroupBarrier();
    if li == 0u {
        var acc = 0u;
        for (var t = 0u; t < 256u; t++) {
            let v = scan_sums[t];
            scan_sums[t] = acc;
            acc += v;
        }
    }
    workgroupBarrier();
    return scan_sums[li];
}
