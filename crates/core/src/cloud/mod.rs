//! Real-time cloud: sharing one infrastructure among applications with real-time needs.
//!
//! * [`rm`]: seed 001G's service-level-aware resource manager: the matching value (Eq. 1) and the
//!   RM law (Eq. 3) with its clamping and renormalisation.
//! * [`sl`]: an application's private service-level controller g_i (Eq. 2), a PI rule on f.
//! * [`slsim`]: a discrete-time simulation of SL-aware applications under the RM: closed-loop
//!   users with exponential think times, a processor-sharing queue per application.
//! * [`cbs`]: a CBS/EDF reservation simulator (Abeni–Buttazzo rules).
//! * [`vsn`]: seed 001F's virtual service networks: the infrastructure and the requests.
//! * [`placement`], [`admission`], [`live`]: online admission of VSNs (components on cores under EDF,
//!   virtual links on paths, bounds from the network analysis).

pub mod admission;
pub mod cbs;
pub mod live;
pub mod placement;
pub mod rm;
pub mod sl;
pub mod slsim;
pub mod vsn;
