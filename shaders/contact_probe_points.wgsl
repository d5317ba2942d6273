// contact_probe_points.wgsl — `package::slot_tables` of the contact probe (contact_probe.wgsl):
// where the contact models (models.wgsl) read and write a Jäger history's points. The probe
// runs one contact per invocation, whose points it copies between its state and this working
// array before and after its steps; `at` is not needed. The contact kernels' module of the
// same name (slot_tables.wgsl) keeps them in the slots.

import package::spec::{JAGER_CAP};

// The working history's points but the last (the models keep that one in the state).
var<private> work_points: array<vec4<f32>, JAGER_CAP - 1u>;

fn point(at: u32, m: u32) -> vec4<f32> {
    return work_points[m];
}
fn put_point(at: u32, m: u32, p: vec4<f32>) {
    work_points[m] = p;
}
