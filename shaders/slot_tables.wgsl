// slot_tables.wgsl — `package::slot_tables` of the contact kernels (contact_forces.wgsl and
// integrate.wgsl, which builds on it): the neighbour and wall slot tables, and where the
// contact models (models.wgsl) read and write a Jäger history's points, each in its slot.
// The models import `point` and `put_point` from here; the contact probe composes its own
// `package::slot_tables` (contact_probe_points.wgsl) with the same two functions.
// A history's points are read and written in storage one at a time: kept in a function's
// array instead, the points were copied in and out at every step and lavapipe compiled each
// access at a computed index into code for every element (minutes of LLVM at 32 points).

import package::spec::{JAGER_POINTS};
import package::common::{SlotWords, WallSlot};

// The neighbour slots of this chunk ([particle][slot], `params.slots` a particle).
@group(0) @binding(8) var<storage, read_write> slots: array<SlotWords>;
// The wall slots ([row][slot]).
@group(0) @binding(9) var<storage, read_write> wall_slots: array<WallSlot>;

// Where a Jäger history's points lie (`JagerState::at`): a neighbour slot's index in `slots`,
// a wall slot's in `wall_slots` with this bit, or nowhere (a contact without a slot, a defect
// the kernel reports: its points are not kept).
const IN_WALL_SLOTS: u32 = 0x80000000u;
const NOWHERE: u32 = 0xffffffffu;

// Point m (< JAGER_POINTS) of the history at `at` (nowhere: a wall slot's, clamped, which
// the defect's report makes moot).
@if(slot_jager)
fn point(at: u32, m: u32) -> vec4<f32> {
    if (at & IN_WALL_SLOTS) != 0u {
        return wall_slots[at & ~IN_WALL_SLOTS].slot.points[m];
    }
    return slots[at].points[m];
}
@if(slot_jager)
fn put_point(at: u32, m: u32, p: vec4<f32>) {
    if at == NOWHERE {
        return;
    }
    if (at & IN_WALL_SLOTS) != 0u {
        wall_slots[at & ~IN_WALL_SLOTS].slot.points[m] = p;
    } else {
        slots[at].points[m] = p;
    }
}
// Without Jäger slots no contact has a history.
@if(!slot_jager)
fn point(at: u32, m: u32) -> vec4<f32> {
    return vec4<f32>(0.0);
}
@if(!slot_jager)
fn put_point(at: u32, m: u32, p: vec4<f32>) {
}
