//! The engine's constants as attributes of the module (`rtnetlab._core.INTERFRAME_BYTES`, ...),
//! so that the front reads each number from its one definition (`rtnetlab_core::constants`).

use pyo3::prelude::*;
use rtnetlab_core::constants as c;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("INTERFRAME_BYTES", c::INTERFRAME_BYTES)?;
    m.add("ETHERNET_MIN_FRAME_BYTES", c::ETHERNET_MIN_FRAME_BYTES)?;
    m.add("ETHERNET_MAX_FRAME_BYTES", c::ETHERNET_MAX_FRAME_BYTES)?;
    m.add("AFDX_FRAME_HEADERS_BYTES", c::AFDX_FRAME_HEADERS_BYTES)?;
    m.add("AFDX_FRAME_OVERHEAD_BYTES", c::AFDX_FRAME_OVERHEAD_BYTES)?;
    m.add("AFDX_BAGS_MS", pyo3::types::PyTuple::new_bound(m.py(), c::AFDX_BAGS_MS))?;
    Ok(())
}
