// jager_slot.wgsl — moving a Jäger contact's head between its slot (`Slot`, common.wgsl) and
// the models' `JagerState` (models.wgsl), for the contact kernels. A Jäger slot keeps the point
// count in `tangential.z`'s bits, the force in `.xy` and the contact frame in `frame`; its
// points stay in the slot in storage, where the models read and write them
// (`package::slot_tables`). Without Jäger slots a contact has an empty history.
// CPU twin: the Jäger arm of `contact::model::evaluate` (crates/wgdem-core/src/contact/model.rs).

import package::common::{Slot};
import package::models::{JagerState};

// The state of slot `s`, whose points lie at `at` (`package::slot_tables`).
@if(!slot_jager)
fn jager_head_state(s: Slot, at: u32) -> JagerState {
    var st: JagerState;
    st.at = at;
    st.frame = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    return st;
}
@if(slot_jager)
fn jager_head_state(s: Slot, at: u32) -> JagerState {
    var st: JagerState;
    st.count = bitcast<u32>(s.tangential.z);
    st.at = at;
    st.tangential = s.tangential.xy;
    st.frame = s.frame;
    return st;
}
// Slot `s` with the state's head (its points were written in place).
@if(!slot_jager)
fn jager_head(st: ptr<function, JagerState>, s: Slot) -> Slot {
    return s;
}
@if(slot_jager)
fn jager_head(st: ptr<function, JagerState>, s: Slot) -> Slot {
    var out = s;
    out.tangential = vec3<f32>((*st).tangential, bitcast<f32>((*st).count));
    out.frame = (*st).frame;
    return out;
}
