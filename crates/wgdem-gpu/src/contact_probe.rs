//! The contact models of `shaders/models.wgsl` driven through given kinematics on the GPU
//! (`shaders/contact_probe.wgsl`): `wgdem contact --backend gpu` and the GPU model tests.
//!
//! Each contact's state (Kuhn, hill and Jäger state, accumulated dissipation) lives in a storage
//! buffer between dispatches; one invocation runs one contact through its steps in order.

use bytemuck::{Pod, Zeroable};
use glam::DVec3;
use wgdem_core::contact::hill::HillParams;
use wgdem_core::contact::jager::JagerParams;
use wgdem_core::contact::kuhn::KuhnParams;
use wgdem_core::contact_case::{
    CaseEvaluator, CaseParams, MoistureAction, StepKinematics, StepResult,
};

use crate::context::{GpuContext, GpuError, map_and_read};
use crate::shaders;

/// Bytes of one contact's `ProbeState` (a test checks naga's layout).
pub const PROBE_STATE_BYTES: usize = 624;

/// Most Jäger history points the GPU holds per contact (defined with the shared values).
pub use crate::shared::JAGER_GPU_CAPACITY;

/// `ProbeSetup` of contact_probe.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ProbeSetup {
    /// 0 spring–dashpot (Hooke or Hertz), 1 linear, 2 hill, 3 Jäger.
    pub model: u32,
    /// Before the first step: 0 none, 1 make_wet, 2 make_dry.
    pub action: u32,
    /// Steps per contact in the dispatch.
    pub steps: u32,
    /// Contacts.
    pub contacts: u32,
    /// Moisture gap of make_wet (m).
    pub moisture_gap: f32,
    /// Gap when the action applies (m).
    pub gap_now: f32,
    /// Padding.
    pub _p: [u32; 2],
    /// Kuhn: kn, kt, friction, twirl (as bits: 1 on).
    pub kuhn: [f32; 4],
    /// Hill: kn, ks, eta_n, eta_s, friction, suction, r_o, padding.
    pub hill: [f32; 8],
    /// Jäger: e_bar, kappa, friction, radius, dp_max, capacity (bits), padding.
    pub jager: [f32; 8],
    /// Spring–dashpot: kn, kt, gamma_n, gamma_t, friction, eff_mass, eff_radius, and as bits
    /// the law (`shared::law`) plus the history mode (`shared::history`) shifted by
    /// `shared::LAW_HISTORY_SHIFT`.
    pub spring: [f32; 8],
}

/// `ProbeStep`: one step of one contact.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ProbeStep {
    /// Unit normal A→B, overlap (m).
    pub normal_overlap: [f32; 4],
    /// Movement of B's contact point relative to A's (m), twirl (rad).
    pub movement_twirl: [f32; 4],
    /// Relative velocity (m/s), unused.
    pub velocity: [f32; 4],
}

/// `ProbeOut`: one step's result.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct ProbeOut {
    /// Force on B (N), normal force (N).
    pub force: [f32; 4],
    /// Elastic energy (J), dissipated work so far (J), surface force (N), moisture force (N).
    pub energy: [f32; 4],
    /// Jäger history points, slid, active, unused.
    pub extra: [u32; 4],
}

impl ProbeSetup {
    /// The setup for `params`, with no action.
    pub fn new(params: &CaseParams) -> Result<Self, GpuError> {
        let mut s = ProbeSetup::zeroed();
        match params {
            CaseParams::SpringDashpot(model, p) => {
                use wgdem_core::contact::{ContactLaw, HistoryMode};
                let law = match model.law {
                    ContactLaw::Hooke => crate::shared::law::HOOKE,
                    ContactLaw::Hertz => crate::shared::law::HERTZ,
                };
                let history = match model.history {
                    HistoryMode::True => crate::shared::history::TRUE,
                    HistoryMode::Pseudo => crate::shared::history::PSEUDO,
                    HistoryMode::None => crate::shared::history::NONE,
                };
                s.model = crate::shared::model::SPRING;
                s.spring = [
                    p.kn as f32,
                    p.kt as f32,
                    p.gamma_n as f32,
                    p.gamma_t as f32,
                    p.friction as f32,
                    p.eff_mass as f32,
                    p.eff_radius as f32,
                    f32::from_bits(law | (history << crate::shared::LAW_HISTORY_SHIFT)),
                ];
            }
            CaseParams::Linear(KuhnParams {
                kn,
                kt,
                friction,
                twirl,
                ..
            }) => {
                s.model = 1;
                s.kuhn = [
                    *kn as f32,
                    *kt as f32,
                    *friction as f32,
                    f32::from_bits(u32::from(*twirl)),
                ];
            }
            CaseParams::Hill(HillParams {
                kn,
                ks,
                eta_n,
                eta_s,
                friction,
                suction,
                r_o,
                ..
            }) => {
                s.model = 2;
                s.hill = [
                    *kn as f32,
                    *ks as f32,
                    *eta_n as f32,
                    *eta_s as f32,
                    *friction as f32,
                    *suction as f32,
                    *r_o as f32,
                    0.0,
                ];
            }
            CaseParams::Jager(JagerParams {
                e_bar,
                kappa,
                friction,
                radius,
                dp_max,
                capacity,
            }) => {
                if *capacity > JAGER_GPU_CAPACITY {
                    return Err(GpuError::Unsupported(format!(
                        "a Jäger history capacity of {capacity} points exceeds the GPU's {JAGER_GPU_CAPACITY}; set capacity ≤ {JAGER_GPU_CAPACITY}"
                    )));
                }
                s.model = 3;
                s.jager = [
                    *e_bar as f32,
                    *kappa as f32,
                    *friction as f32,
                    *radius as f32,
                    *dp_max as f32,
                    f32::from_bits(*capacity as u32),
                    0.0,
                    0.0,
                ];
            }
        }
        Ok(s)
    }
}

impl ProbeStep {
    /// From the driver's f64 kinematics.
    pub fn from_kinematics(k: &StepKinematics) -> Self {
        let v = |a: DVec3, w: f64| [a.x as f32, a.y as f32, a.z as f32, w as f32];
        Self {
            normal_overlap: v(k.normal, k.overlap),
            movement_twirl: v(k.displacement, k.twirl),
            velocity: v(k.velocity, 0.0),
        }
    }
}

/// Contacts on the GPU with their state.
pub struct ContactProbe {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    states: wgpu::Buffer,
    contacts: u32,
    /// Input, output and readback buffers, kept between runs and regrown when a run has more
    /// steps (a free stage runs one step per call).
    io: Option<ProbeIo>,
}

struct ProbeIo {
    /// Steps the buffers hold.
    capacity: usize,
    setup: wgpu::Buffer,
    steps: wgpu::Buffer,
    output: wgpu::Buffer,
    staging: wgpu::Buffer,
    group: wgpu::BindGroup,
}

impl ContactProbe {
    /// `contacts` fresh contacts (apart, dry, no history).
    pub fn new(ctx: &GpuContext, contacts: u32) -> Self {
        let device = ctx.device.clone();
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("dem.contact_probe"),
            source: wgpu::ShaderSource::Wgsl(shaders::with_models(shaders::CONTACT_PROBE).into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("dem.contact_probe"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let states = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("dem.contact_probe.states"),
            size: (contacts as usize * PROBE_STATE_BYTES) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Self {
            device,
            queue: ctx.queue.clone(),
            pipeline,
            states,
            contacts,
            io: None,
        }
    }

    /// Buffers for runs of up to `steps` steps (all contacts together).
    fn ensure_io(&mut self, steps: usize) {
        if self.io.as_ref().is_none_or(|io| io.capacity < steps) {
            let buffer = |label: &str, bytes: usize, usage: wgpu::BufferUsages| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: bytes as u64,
                    usage,
                    mapped_at_creation: false,
                })
            };
            use wgpu::BufferUsages as U;
            let out_bytes = steps * size_of::<ProbeOut>();
            let setup = buffer(
                "dem.contact_probe.setup",
                size_of::<ProbeSetup>(),
                U::STORAGE | U::COPY_DST,
            );
            let step_buf = buffer(
                "dem.contact_probe.steps",
                steps * size_of::<ProbeStep>(),
                U::STORAGE | U::COPY_DST,
            );
            let output = buffer("dem.contact_probe.out", out_bytes, U::STORAGE | U::COPY_SRC);
            let staging = buffer(
                "dem.contact_probe.readback",
                out_bytes,
                U::MAP_READ | U::COPY_DST,
            );
            let entries = [&setup, &step_buf, &self.states, &output].map(|b| b.as_entire_binding());
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("dem.contact_probe"),
                layout: &self.pipeline.get_bind_group_layout(0),
                entries: &entries
                    .into_iter()
                    .enumerate()
                    .map(|(k, resource)| wgpu::BindGroupEntry {
                        binding: k as u32,
                        resource,
                    })
                    .collect::<Vec<_>>(),
            });
            self.io = Some(ProbeIo {
                capacity: steps,
                setup,
                steps: step_buf,
                output,
                staging,
                group,
            });
        }
    }

    /// Runs every contact through `steps` (contact-major: contact `c`'s steps are
    /// `steps[c * s .. (c + 1) * s]`), returning the outputs in the same order: one submit
    /// (compute and copy to the readback buffer) and one map per call.
    pub fn run(
        &mut self,
        setup: ProbeSetup,
        steps: &[ProbeStep],
    ) -> Result<Vec<ProbeOut>, GpuError> {
        let per = steps.len() / self.contacts as usize;
        if per == 0 {
            return Ok(Vec::new());
        }
        let setup = ProbeSetup {
            steps: per as u32,
            contacts: self.contacts,
            ..setup
        };
        let groups = self.contacts.div_ceil(crate::shared::WG);
        self.ensure_io(steps.len());
        let Some(io) = self.io.as_ref() else {
            unreachable!("ensure_io sets the buffers")
        };
        self.queue
            .write_buffer(&io.setup, 0, bytemuck::bytes_of(&setup));
        self.queue
            .write_buffer(&io.steps, 0, bytemuck::cast_slice(steps));
        let out_bytes = (steps.len() * size_of::<ProbeOut>()) as u64;
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dem.contact_probe"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dem.contact_probe"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &io.group, &[]);
            pass.dispatch_workgroups(groups, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&io.output, 0, &io.staging, 0, out_bytes);
        self.queue.submit([encoder.finish()]);
        map_and_read(&self.device, &io.staging, out_bytes)
    }
}

/// `wgdem contact --backend gpu`: the case's contact evaluated by the WGSL models in f32.
pub struct GpuCaseEvaluator {
    probe: ContactProbe,
    setup: Option<ProbeSetup>,
    adapter: String,
}

impl GpuCaseEvaluator {
    /// One contact on the context's device.
    pub fn new(ctx: &GpuContext) -> Self {
        Self {
            probe: ContactProbe::new(ctx, 1),
            setup: None,
            adapter: ctx.describe(),
        }
    }
}

impl CaseEvaluator for GpuCaseEvaluator {
    fn configure(
        &mut self,
        params: &CaseParams,
        action: Option<(MoistureAction, f64, f64)>,
    ) -> wgdem_core::Result<()> {
        let mut setup =
            ProbeSetup::new(params).map_err(|e| wgdem_core::Error::Backend(e.to_string()))?;
        if let Some((a, gap, moisture_gap)) = action {
            setup.action = match a {
                MoistureAction::Wet => 1,
                MoistureAction::Dry => 2,
            };
            setup.gap_now = gap as f32;
            setup.moisture_gap = moisture_gap as f32;
        }
        self.setup = Some(setup);
        Ok(())
    }

    fn evaluate(&mut self, steps: &[StepKinematics]) -> wgdem_core::Result<Vec<StepResult>> {
        let setup = self.setup.ok_or_else(|| {
            wgdem_core::Error::Backend("the GPU evaluator was not configured".to_owned())
        })?;
        let input: Vec<ProbeStep> = steps.iter().map(ProbeStep::from_kinematics).collect();
        let out = self
            .probe
            .run(setup, &input)
            .map_err(|e| wgdem_core::Error::Backend(e.to_string()))?;
        // The action applies once, before the first step after `configure`.
        if let Some(s) = &mut self.setup {
            s.action = 0;
        }
        Ok(out
            .iter()
            .map(|o| StepResult {
                force: DVec3::new(o.force[0] as f64, o.force[1] as f64, o.force[2] as f64),
                elastic: o.energy[0] as f64,
                // Jäger's and the spring–dashpot's work is not split.
                dissipated: if setup.model == 3 || setup.model == crate::shared::model::SPRING {
                    f64::NAN
                } else {
                    o.energy[1] as f64
                },
                surface: o.energy[2] as f64,
                moisture: o.energy[3] as f64,
                history: o.extra[0] as usize,
            })
            .collect())
    }

    fn name(&self) -> String {
        self.adapter.clone()
    }
}
