//! Estimators shared by CCAs and transports.

pub mod delivery_rate;
pub mod rtt;
pub mod windowed_filter;
