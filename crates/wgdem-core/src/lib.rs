//! wgdem core: the physics of the discrete element method for spheres, in f64, shared by every
//! backend.
//!
//! - [`contact`]: contact laws as pure functions (Fleischmann et al. 2015; Kuhn, Suzuki & Daouadji;
//!   Potyondy's hill model);
//! - [`contact_case`]: one contact driven through prescribed motions (`wgdem contact`);
//! - [`material`]: materials and the mixing of a contact's parameters;
//! - [`particles`], [`wall`]: state; [`loads`]: applied loads, constraints, wall schedules;
//! - [`broadphase`]: the spatial hash and its brute-force check;
//! - [`cell`]: the periodic cell (nearest images, wrapping, a velocity gradient);
//!   [`cell_servo`]: its mixed stress/strain control;
//! - [`cpu`]: the reference stepper and the critical time step;
//! - [`scene`]: TOML scenes, validation, particle generation;
//! - [`packing`]: spheres brought in from files, and the checks they must pass;
//! - [`output`], [`runner`]: running a scene and writing its results;
//! - [`provenance`]: the version, command line and input every summary records;
//! - [`snapshot`]: the contacts and particle stresses a ParaView snapshot shows;
//! - [`shear`], [`analysis`]: the direct shear test and the quantities measured on packings;
//! - [`element`]: element tests in a periodic cell (triaxial, biaxial, simple shear);
//!   [`protocol`]: what they share with the shear test (rows, checkpoints, writers);
//! - [`bench`]: the sheared dense specimen that `wgdem bench` measures.
//!
//! Units are SI throughout.

pub mod analysis;
pub mod backend;
pub mod bench;
pub mod broadphase;
pub mod cell;
pub mod cell_servo;
pub mod checkpoint;
pub mod contact;
pub mod contact_case;
pub mod cpu;
pub mod element;
pub mod error;
pub mod guard;
pub mod loads;
pub mod material;
pub mod output;
pub mod overrides;
pub mod packing;
pub mod particles;
pub mod protocol;
pub mod provenance;
pub mod runner;
pub mod scene;
pub mod shear;
pub mod snapshot;
pub mod wall;

pub use error::{Error, Result};
