//! What a direct shear test writes beyond its CSV, summary and checkpoint: ParaView snapshots,
//! plots and the saved specimens, through [`TestWriter`] (implemented in `wgdem-io`).

use super::Row;
use crate::protocol::TestWriter;

/// Writes a shear test's snapshot files, plots and specimens: any [`TestWriter`] of its
/// rows.
pub trait ShearWriter: TestWriter<Row> {}

impl<T: TestWriter<Row> + ?Sized> ShearWriter for T {}
