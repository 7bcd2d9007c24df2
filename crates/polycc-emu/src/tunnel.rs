//! The two TUN devices through which the emulator carries every packet between the left
//! (sender-side) and the right (receiver-side) namespace, as mahimahi's shells do.
//!
//! Each namespace gets one device, `pcc0`, with an address in 10.77.0.0/16: the connected route
//! sends everything for the other side into the device, where the emulator reads it. Without
//! offloads (no `vnet_hdr`) the kernel segments TCP before the device, so the emulator sees
//! packets of at most the MTU, as a NIC's wire would after TSO.

use crate::error::EmuError;
use crate::netns::Netns;
use std::net::Ipv4Addr;

/// Address of the left namespace's device (senders of forward flows).
pub const LEFT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// Address of the right namespace's device (receivers of forward flows).
pub const RIGHT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 1, 1);
const NETMASK: Ipv4Addr = Ipv4Addr::new(255, 255, 0, 0);
/// Name of the device in each namespace.
pub const DEVICE: &str = "pcc0";
/// The devices' MTU: Ethernet's, so that packets are the sizes the simulator assumes.
pub const MTU: u16 = 1500;
/// Packets the kernel may queue in a device before the emulator reads them; generous, so
/// that the emulated queue, not the device's, is where packets wait and drop.
const TX_QUEUE_LEN: &str = "10000";

pub struct Tunnel {
    pub left: tun::Device,
    pub right: tun::Device,
}

impl Tunnel {
    pub fn open(left: &Netns, right: &Netns) -> Result<Tunnel, EmuError> {
        Ok(Tunnel {
            left: device(left, LEFT_ADDR)?,
            right: device(right, RIGHT_ADDR)?,
        })
    }
}

fn device(ns: &Netns, addr: Ipv4Addr) -> Result<tun::Device, EmuError> {
    let dev = ns.run_in(|| {
        let mut config = tun::Configuration::default();
        config
            .tun_name(DEVICE)
            .address(addr)
            .netmask(NETMASK)
            .mtu(MTU)
            .up();
        tun::create(&config)
            .map_err(|e| EmuError::system(format!("TUN device in {}", ns.name()), e))
    })?;
    dev.set_nonblock()
        .map_err(|e| EmuError::system("non-blocking TUN device", e))?;
    ns.ip(&["link", "set", DEVICE, "txqueuelen", TX_QUEUE_LEN])?;
    Ok(dev)
}
