// jager_slot.wgsl — moving a Jäger history between a contact slot and the models'
// `JagerState` (models.wgsl), for the contact and moisture kernels. A Jäger slot
// (`slot_jager`, common.wgsl) keeps the point count in `tangential.z`'s bits and the force in
// `.xy`; without Jäger slots a contact has an empty history.
// CPU twin: the Jäger arm of `contact::model::evaluate` (crates/wgdem-core/src/contact/model.rs).

import package::spec::{JAGER_POINTS};
import package::common::{Slot};
import package::models::{JagerState};

@if(!slot_jager)
fn jager_load(s: Slot) -> JagerState {
    var st: JagerState;
    st.frame = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    return st;
}
@if(!slot_jager)
fn jager_store(st: ptr<function, JagerState>, s: Slot) -> Slot {
    return s;
}
@if(slot_jager)
fn jager_load(s: Slot) -> JagerState {
    var st: JagerState;
    st.count = bitcast<u32>(s.tangential.z);
    st.tangential = s.tangential.xy;
    st.frame = s.frame;
    for (var k = 0u; k < min(st.count, JAGER_POINTS); k++) {
        st.points[k] = s.points[k];
    }
    return st;
}
@if(slot_jager)
fn jager_store(st: ptr<function, JagerState>, s: Slot) -> Slot {
    var out = s;
    out.tangential = vec3<f32>((*st).tangential, bitcast<f32>((*st).count));
    out.frame = (*st).frame;
    for (var k = 0u; k < min((*st).count, JAGER_POINTS); k++) {
        out.points[k] = (*st).points[k];
    }
    return out;
}
