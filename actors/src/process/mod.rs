//! Child supervision: `raven up` runs `raven gateway` as a child ([`GatewayChild`]), restarts
//! it with backoff when it dies, adopts one that outlived the previous supervisor, and stops
//! it when the supervisor stops ([`terminate_gateway`] for an adopted one).

mod child;
pub mod memory;
mod pid;

pub use child::{ChildEvent, GatewayChild};
pub use pid::terminate_gateway;

/// The exit code of a gateway that cannot listen (the address is taken, say): its supervisor
/// tells the user once and tries again slowly, rather than restarting it every few seconds.
pub const CANNOT_LISTEN: u8 = 3;

/// Set by the supervisor on the gateway it starts (to its pid, for the log): such a gateway
/// leaves when no supervisor has answered for a while.
pub(crate) const SUPERVISED: &str = "RAVEN_GATEWAY_SUPERVISED";
