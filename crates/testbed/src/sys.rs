//! The operating system's side: raw Ethernet through AF_PACKET (a TPACKET_V2 receive ring, so
//! frames come with the kernel's arrival time and several are read per wake-up; plain `send`
//! for transmission, which happens one frame at a time at a planned instant), entering a network
//! namespace, the clock, real-time scheduling.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

// Linux's if_packet.h (stable ABI).
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const ETH_P_ALL: u16 = 0x0003;

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

#[repr(C)]
struct Tpacket2Hdr {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    sec: u32,
    nsec: u32,
    vlan_tci: u16,
    vlan_tpid: u16,
    padding: [u8; 4],
}

/// Slot of one frame in the receive ring: header, address and a whole Ethernet frame.
const SLOT: usize = 2048;
/// Slots in the ring: enough for bursts of a few milliseconds at 1 Gbit/s of small frames.
const SLOTS: usize = 4096;
const BLOCK: usize = 1 << 20;

fn last_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// One interface: a packet socket bound to it, its receive ring, and where the next frame is.
pub struct Iface {
    pub fd: RawFd,
    pub name: String,
    ring: *mut u8,
    next: usize,
}

// SAFETY: the ring is owned by this value alone and only touched through `&mut self`.
unsafe impl Send for Iface {}

/// A frame read from a ring: its bytes (copied out, the slot given back) and the kernel's
/// arrival time (`CLOCK_REALTIME` ns).
pub struct Received {
    pub at_ns: i64,
    pub len: usize,
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T, what: &str) -> io::Result<()> {
    // SAFETY: `value` points to a live T of the size given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(last_error(what));
    }
    Ok(())
}

impl Iface {
    /// Opens `name` in the current namespace: a raw socket for every EtherType, frames this
    /// socket or others send on the interface not echoed back, a receive ring, and with
    /// `bypass_qdisc` transmission straight to the device (the user-space ports pace themselves;
    /// kernel-mode end systems go through the interface's qdisc, which is the port).
    pub fn open(name: &str, bypass_qdisc: bool) -> io::Result<Iface> {
        let cname = CString::new(name).map_err(|_| io::Error::other("interface name with NUL"))?;
        // SAFETY: plain calls with valid arguments; results checked.
        let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if index == 0 {
            return Err(last_error(&format!("interface {name}")));
        }
        let fd = unsafe {
            libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, (ETH_P_ALL).to_be() as i32)
        };
        if fd < 0 {
            return Err(last_error("AF_PACKET socket (CAP_NET_RAW needed)"));
        }
        let close_on_err = |e: io::Error| {
            // SAFETY: fd is ours.
            unsafe { libc::close(fd) };
            e
        };
        setsockopt(fd, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")
            .map_err(close_on_err)?;
        setsockopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32, "PACKET_IGNORE_OUTGOING")
            .map_err(close_on_err)?;
        // Asking for timestamps turns on the kernel's stamping of frames as they are queued for
        // reception (netdev_tstamp_prequeue): the ring's stamp is then when the frame left the
        // veth's other end, not when this namespace's receive softirq got round to it.
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &1i32, "SO_TIMESTAMPNS")
            .map_err(close_on_err)?;
        if bypass_qdisc {
            setsockopt(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &1i32, "PACKET_QDISC_BYPASS")
                .map_err(close_on_err)?;
        }
        let req = TpacketReq {
            block_size: BLOCK as u32,
            block_nr: (SLOTS * SLOT / BLOCK) as u32,
            frame_size: SLOT as u32,
            frame_nr: SLOTS as u32,
        };
        setsockopt(fd, libc::SOL_PACKET, PACKET_RX_RING, &req, "PACKET_RX_RING").map_err(close_on_err)?;
        // SAFETY: maps the ring the kernel just allocated for this socket.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                SLOTS * SLOT,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED,
                fd,
                0,
            )
        };
        let ring = if ring == libc::MAP_FAILED {
            // MAP_LOCKED may exceed RLIMIT_MEMLOCK: the ring works unlocked too.
            // SAFETY: as above.
            let r = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    SLOTS * SLOT,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if r == libc::MAP_FAILED {
                return Err(close_on_err(last_error("mmap of the receive ring")));
            }
            r
        } else {
            ring
        };
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = ETH_P_ALL.to_be();
        addr.sll_ifindex = index as i32;
        // SAFETY: addr is a valid sockaddr_ll.
        let rc = unsafe {
            libc::bind(
                fd,
                &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(close_on_err(last_error(&format!("bind to {name}"))));
        }
        Ok(Iface { fd, name: name.to_string(), ring: ring as *mut u8, next: 0 })
    }

    /// The next frame waiting in the ring, copied into `buf`; `None` when the ring is empty.
    pub fn recv(&mut self, buf: &mut [u8]) -> Option<Received> {
        // SAFETY: slot `next` lies inside the mapped ring; its status word is shared with the
        // kernel, read and written volatile, with fences ordering the data between them.
        unsafe {
            let slot = self.ring.add(self.next * SLOT);
            let hdr = slot as *mut Tpacket2Hdr;
            let status = std::ptr::read_volatile(&(*hdr).status);
            if status & TP_STATUS_USER == 0 {
                return None;
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            let len = ((*hdr).snaplen as usize).min(buf.len());
            let data = slot.add((*hdr).mac as usize);
            std::ptr::copy_nonoverlapping(data, buf.as_mut_ptr(), len);
            let at_ns = (*hdr).sec as i64 * 1_000_000_000 + (*hdr).nsec as i64;
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            std::ptr::write_volatile(&mut (*hdr).status, TP_STATUS_KERNEL);
            self.next = (self.next + 1) % SLOTS;
            Some(Received { at_ns, len })
        }
    }

    /// Sends one frame (already laid out, without FCS).
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        loop {
            // SAFETY: frame is a valid buffer of its length.
            let rc = unsafe { libc::send(self.fd, frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
            if rc >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // The device's queue is full (ENOBUFS/EAGAIN): the frame is lost there, as a
                // full buffer would lose it.
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) => return Err(e),
                _ => return Err(last_error(&format!("send on {}", self.name))),
            }
        }
    }
}

impl Drop for Iface {
    fn drop(&mut self) {
        // SAFETY: the ring and socket are ours.
        unsafe {
            libc::munmap(self.ring as *mut libc::c_void, SLOTS * SLOT);
            libc::close(self.fd);
        }
    }
}

/// Enters the network namespace `/run/netns/NAME` (as `ip netns exec` does, without its mount
/// namespace: nothing here reads /sys).
pub fn enter_netns(name: &str) -> io::Result<()> {
    let path = CString::new(format!("/run/netns/{name}")).map_err(|_| io::Error::other("netns name"))?;
    // SAFETY: valid path; the fd is closed after use.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(last_error(&format!("network namespace {name}")));
    }
    let rc = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
    unsafe { libc::close(fd) };
    if rc < 0 {
        return Err(last_error(&format!("entering network namespace {name} (CAP_SYS_ADMIN needed)")));
    }
    Ok(())
}

/// `CLOCK_REALTIME` in ns: the clock the kernel stamps received frames with, shared by every
/// namespace.
pub fn now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Waits until a frame arrives on one of `fds` or `timeout_ns` has passed (negative: no wait).
pub fn wait(fds: &mut [libc::pollfd], timeout_ns: i64) {
    let ts = libc::timespec {
        tv_sec: timeout_ns.max(0) / 1_000_000_000,
        tv_nsec: timeout_ns.max(0) % 1_000_000_000,
    };
    for p in fds.iter_mut() {
        p.revents = 0;
    }
    // SAFETY: fds is a valid array; the timeout is valid.
    unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
}

/// Dies with the process that started this one: when the front set `RTNETLAB_PARENT_PID`, the
/// parent-death signal is SIGKILL (a node at `SCHED_FIFO` must not outlive its run), and if the
/// parent is already gone (it died before the signal was set) the process exits at once.
pub fn die_with_parent() {
    let Some(parent) = std::env::var("RTNETLAB_PARENT_PID").ok().and_then(|p| p.parse::<libc::pid_t>().ok())
    else {
        return;
    };
    // SAFETY: plain calls.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
}

static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static EPOCH: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// The run's epoch (`CLOCK_REALTIME` ns) once the front has sent it (`epoch N` on the control
/// pipe), after every node said it was ready; waits for it, up to `timeout_ns`.
pub fn epoch(timeout_ns: i64) -> Option<i64> {
    let deadline = now_ns() + timeout_ns;
    loop {
        let e = EPOCH.load(std::sync::atomic::Ordering::Acquire);
        if e != 0 {
            return Some(e);
        }
        if now_ns() > deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
}

/// Whether the front asked the run to end now (`stop` on the control pipe): the node then
/// reports what it measured so far.
pub fn stop_requested() -> bool {
    STOP.load(std::sync::atomic::Ordering::Relaxed)
}

/// Stops the process when its standard input is a pipe and that pipe closes: the front holds
/// its end for the whole run, so an end of file means the run is over, whatever the schedule
/// says. A line `stop` ends the run early, with its report (an interrupted run); `epoch N` gives
/// the run's epoch. A terminal or /dev/null is not a control pipe and is left alone.
pub fn stop_when_stdin_closes() {
    // SAFETY: fstat on fd 0 into a zeroed struct.
    let is_pipe = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(0, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
    };
    if !is_pipe {
        return;
    }
    std::thread::spawn(|| {
        let mut buf = [0u8; 64];
        let mut line = Vec::new();
        loop {
            // SAFETY: reads into a valid buffer.
            let n = unsafe { libc::read(0, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n == 0 || (n < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)) {
                // SAFETY: ends the process without unwinding the main thread.
                unsafe { libc::_exit(3) };
            }
            for &b in &buf[..n.max(0) as usize] {
                if b == b'\n' {
                    if line == b"stop" {
                        STOP.store(true, std::sync::atomic::Ordering::Relaxed);
                    } else if let Some(n) = line.strip_prefix(b"epoch ") {
                        if let Some(e) = std::str::from_utf8(n).ok().and_then(|t| t.parse::<i64>().ok()) {
                            EPOCH.store(e, std::sync::atomic::Ordering::Release);
                        }
                    }
                    line.clear();
                } else if line.len() < 32 {
                    line.push(b);
                }
            }
        }
    });
}

/// The scheduling the process got: `SCHED_FIFO` at `priority` when allowed (the host's noise
/// then reaches it less), else the default, said in the result.
pub fn realtime_scheduling(priority: i32) -> String {
    // SAFETY: plain calls; failures are reported, not fatal.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE);
        if priority <= 0 {
            return "SCHED_OTHER".into();
        }
        let param = libc::sched_param { sched_priority: priority };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 {
            format!("SCHED_FIFO {priority}")
        } else {
            format!("SCHED_OTHER ({})", io::Error::last_os_error())
        }
    }
}
