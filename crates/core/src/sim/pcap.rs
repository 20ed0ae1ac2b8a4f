//! pcapng trace writer for simulated frames, so a simulation run can be inspected in Wireshark.
//!
//! The simulator only knows *which* frame crossed *which* link *when*; it has no payload bytes.
//! This module synthesises plausible AFDX (ARINC 664 part 7) frames from that metadata, so
//! Wireshark's usual filters (`eth.dst`, `ip.dst`, `udp.length`, `frame.interface_name`) work on
//! simulated traffic exactly as on a capture from a real network.
//!
//! # File layout
//!
//! One pcapng section, written little-endian:
//! - a Section Header Block (section length unknown, `shb_userappl` = "rtnetlab"),
//! - one Interface Description Block per plane, in plane order, so the pcapng interface id *is*
//!   the plane index: `LINKTYPE_ETHERNET`, snaplen [`SNAPLEN`], `if_name` = the caller's plane
//!   name (e.g. "plane A"), `if_tsresol` = 9 (nanoseconds), and `if_speed` when a rate is given,
//! - one Enhanced Packet Block per [`TraceFrame`], timestamped with the simulation time in ns
//!   (Wireshark shows it as an absolute time counted from 1970-01-01 00:00:00 UTC).
//!
//! The block encoding is written by hand: it is a few dozen lines against a stable format, and
//! no dependency is needed for it.
//!
//! # The file
//!
//! [`write_file`] writes a whole trace through an [`OutputFile`], which follows the rule every
//! rtnetlab output follows (the Python front's `io.output.OutputFile` is the same rule): a
//! regular file, or a path that does not exist yet, is written under a temporary name beside it
//! and renamed over it once complete, so an error or an interruption never leaves a half-written
//! trace, and a replaced file keeps its permission bits; anything else that exists, such as a
//! FIFO or a device (`/dev/null`), is written directly, because renaming over it would replace it
//! with a plain file. No symbolic link is followed: the directories are opened one at a time
//! with `O_NOFOLLOW` and the temporary file is created with `O_EXCL | O_NOFOLLOW` in the last
//! one, so a link on the way, or planted at the temporary name, is refused, never written
//! through (the front follows the links it trusts before it passes the path). The temporary file
//! is removed on every path that does not complete, including an interruption reported by the
//! caller's `keep_going` check.
//!
//! # Captured bytes
//!
//! Like a capture from an ordinary NIC (`LINKTYPE_ETHERNET` without the `if_fcslen` option),
//! the frame is stored *without* its 4-byte FCS, and both captured and original length are
//! `frame_bytes - 4`. So `frame.len` in Wireshark is `frame_bytes - 4` (60..=1514), and the
//! model's frame size is `frame.len + 4`. Recording an original length of `frame_bytes` would
//! instead make Wireshark believe 4 bytes were cut off by the snaplen.
//!
//! # AFDX framing
//!
//! Following ARINC 664 part 7 (the layout of a frame of `frame_bytes` bytes including FCS):
//!
//! | bytes | field | value |
//! |---|---|---|
//! | 0..6 | destination MAC | `03:00:00:00:VV:VV`: the constant 32-bit AFDX prefix, then the VL id |
//! | 6..12 | source MAC | `02:00:00:NN:NN:PP`: locally administered unicast, node index, port index |
//! | 12..14 | EtherType | `0x0800` (IPv4) |
//! | 14..34 | IPv4 header | no options, TTL 1, UDP, `10.NN.NN.PP` → `224.224.VV.VV`, valid checksum |
//! | 34..42 | UDP header | ports 0x2000 + port index → 0x2000, checksum 0 (allowed for IPv4) |
//! | 42..len-5 | AFDX payload | zeros (17..=1471 bytes, so no Ethernet padding is ever needed) |
//! | len-5 | sequence number | [`TraceFrame::seq`] |
//! | len-4..len | FCS | not captured |
//!
//! As in ARINC 664, the sequence number sits *after* the IP datagram: the IPv4 total length is
//! `frame_bytes - 19` and the UDP length `frame_bytes - 39`, and Wireshark shows the sequence
//! number as a 1-byte Ethernet trailer (`eth.trailer`).
//!
//! The source MAC deviates from the ARINC layout on purpose. ARINC puts a 16-bit user-defined
//! id (network id and equipment id) in bytes 3..5 and a 3-bit interface id (network A = 001,
//! B = 010) plus 5 zero bits in byte 5. We keep the 16-bit id as the node index, but use all of
//! byte 5 for the transmitting port index: the plane is already the pcapng interface, the
//! simulator's nodes include switches with more than 32 ports, and a lossless port index is what
//! one needs to tell the links of a node apart. The source IP mirrors the MAC
//! (`10.<node hi>.<node lo>.<port>`), which matches ARINC's `10.<user id>.<partition id>`.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU32, Ordering};

/// pcapng block type of the Section Header Block.
const SHB_TYPE: u32 = 0x0A0D_0D0A;
/// pcapng block type of the Interface Description Block.
const IDB_TYPE: u32 = 0x0000_0001;
/// pcapng block type of the Enhanced Packet Block.
const EPB_TYPE: u32 = 0x0000_0006;
/// Written in the SHB so readers can detect the byte order of the whole section.
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// `LINKTYPE_ETHERNET` (DLT_EN10MB): frames start at the destination MAC.
pub const LINKTYPE_ETHERNET: u16 = 1;

const OPT_ENDOFOPT: u16 = 0;
const OPT_SHB_USERAPPL: u16 = 4;
const OPT_IF_NAME: u16 = 2;
const OPT_IF_SPEED: u16 = 8;
const OPT_IF_TSRESOL: u16 = 9;
/// `if_tsresol` value for 10^-9 s (high bit clear: a negative power of ten).
const TSRESOL_NS: u8 = 9;

/// Smallest Ethernet frame, FCS included.
pub const MIN_FRAME_BYTES: u32 = 64;
/// Largest (untagged, non-jumbo) Ethernet frame, FCS included; also the AFDX maximum.
pub const MAX_FRAME_BYTES: u32 = 1518;
/// Length of the Ethernet FCS, which the trace does not capture.
pub const FCS_BYTES: u32 = 4;
/// Snapshot length of every interface: the largest frame without its FCS, all of which is kept.
pub const SNAPLEN: u32 = MAX_FRAME_BYTES - FCS_BYTES;

/// Ethernet header (two MACs and the EtherType).
const ETH_HEADER: usize = 14;
/// IPv4 header without options.
const IP_HEADER: usize = 20;
/// UDP header.
const UDP_HEADER: usize = 8;
/// Base of the UDP ports, in the user range and clear of well-known services.
pub const UDP_PORT_BASE: u16 = 0x2000;

/// One frame on one link, as a capture sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceFrame {
    /// First bit on the wire, simulation time (must not be negative: pcapng times are unsigned).
    pub time_ns: i64,
    /// Interface index = plane index (an index into the writer's `plane_names`).
    pub plane: usize,
    /// AFDX virtual link id (0 for non-VL flows: use the flow index).
    pub vl_id: u16,
    /// AFDX per-VL sequence number (wraps 1..=255, 0 reserved after reset).
    pub seq: u8,
    /// Transmitting node index.
    pub src_node: u16,
    /// Transmitting port index on that node.
    pub src_port: u8,
    /// Ethernet frame length (64..=1518), FCS included.
    pub frame_bytes: u32,
}

/// Writes a pcapng trace, one interface per plane, one Enhanced Packet Block per frame.
///
/// The writer issues one `write_all` per block and does no buffering of its own: wrap a file in
/// a [`std::io::BufWriter`] for long traces.
pub struct PcapngWriter<W: Write> {
    out: W,
    interfaces: usize,
    frames: u64,
    /// Reused for every block, so writing a frame does not allocate.
    block: Vec<u8>,
}

impl<W: Write> PcapngWriter<W> {
    /// Starts a trace: writes the section header and one interface description per plane.
    ///
    /// `plane_names[i]` becomes interface `i`'s `if_name`. `link_rate_bps` is optional
    /// information: pass an empty slice to omit it, or one rate per plane (a rate of 0 is
    /// omitted too) to record it as `if_speed`.
    pub fn new(out: W, plane_names: &[String], link_rate_bps: &[u64]) -> io::Result<Self> {
        if plane_names.is_empty() {
            return Err(invalid("a pcapng trace needs at least one plane".into()));
        }
        if !link_rate_bps.is_empty() && link_rate_bps.len() != plane_names.len() {
            return Err(invalid(format!(
                "{} link rates for {} planes: give one per plane or none",
                link_rate_bps.len(),
                plane_names.len()
            )));
        }
        if plane_names.len() > u32::MAX as usize {
            return Err(invalid("too many planes for 32-bit pcapng interface ids".into()));
        }
        let mut w = PcapngWriter { out, interfaces: plane_names.len(), frames: 0, block: Vec::new() };

        w.begin(SHB_TYPE);
        put_u32(&mut w.block, BYTE_ORDER_MAGIC);
        put_u16(&mut w.block, 1); // major version
        put_u16(&mut w.block, 0); // minor version
        put_u64(&mut w.block, u64::MAX); // section length: not known in advance (-1)
        put_option(&mut w.block, OPT_SHB_USERAPPL, b"rtnetlab");
        put_option(&mut w.block, OPT_ENDOFOPT, &[]);
        w.end()?;

        for (i, name) in plane_names.iter().enumerate() {
            w.begin(IDB_TYPE);
            put_u16(&mut w.block, LINKTYPE_ETHERNET);
            put_u16(&mut w.block, 0); // reserved
            put_u32(&mut w.block, SNAPLEN);
            put_option(&mut w.block, OPT_IF_NAME, name.as_bytes());
            put_option(&mut w.block, OPT_IF_TSRESOL, &[TSRESOL_NS]);
            if let Some(&rate) = link_rate_bps.get(i).filter(|&&r| r > 0) {
                put_option(&mut w.block, OPT_IF_SPEED, &rate.to_le_bytes());
            }
            put_option(&mut w.block, OPT_ENDOFOPT, &[]);
            w.end()?;
        }
        Ok(w)
    }

    /// Appends one frame as an Enhanced Packet Block.
    ///
    /// Fails with `InvalidInput` (writing nothing) for an unknown plane, a negative time or a
    /// frame size outside 64..=1518, rather than producing a file Wireshark would misread.
    pub fn write(&mut self, f: &TraceFrame) -> io::Result<()> {
        if f.plane >= self.interfaces {
            return Err(invalid(format!(
                "plane {} but the trace has {} interfaces",
                f.plane, self.interfaces
            )));
        }
        let ts = u64::try_from(f.time_ns)
            .map_err(|_| invalid(format!("negative time {} ns cannot go in a pcapng trace", f.time_ns)))?;
        if !(MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&f.frame_bytes) {
            return Err(invalid(format!(
                "frame of {} bytes is outside {MIN_FRAME_BYTES}..={MAX_FRAME_BYTES}",
                f.frame_bytes
            )));
        }
        let captured = f.frame_bytes - FCS_BYTES;

        self.begin(EPB_TYPE);
        put_u32(&mut self.block, f.plane as u32); // checked above against the u32 interface count
        put_u32(&mut self.block, (ts >> 32) as u32);
        put_u32(&mut self.block, ts as u32);
        put_u32(&mut self.block, captured); // captured length
        put_u32(&mut self.block, captured); // original length: the FCS is never part of it
        encode_frame(f, &mut self.block);
        pad32(&mut self.block);
        self.end()?;
        self.frames += 1;
        Ok(())
    }

    /// Number of frames written so far.
    pub fn frames_written(&self) -> u64 {
        self.frames
    }

    /// Flushes and hands back the output. The file is complete after every block, so dropping
    /// the writer instead loses nothing already written, only the flush and any error from it.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    /// Starts a block in `self.block`: type and a placeholder total length.
    fn begin(&mut self, block_type: u32) {
        self.block.clear();
        put_u32(&mut self.block, block_type);
        put_u32(&mut self.block, 0);
    }

    /// Completes the block in `self.block` (total length at both ends) and writes it out.
    fn end(&mut self) -> io::Result<()> {
        debug_assert_eq!(self.block.len() % 4, 0, "block body must be 32-bit aligned");
        let total = (self.block.len() + 4) as u32;
        self.block[4..8].copy_from_slice(&total.to_le_bytes());
        put_u32(&mut self.block, total);
        self.out.write_all(&self.block)
    }
}

/// How many frames [`write_file`] writes between two calls of its `keep_going` check: often
/// enough to stop within a fraction of a second, rarely enough to cost nothing.
pub const CHECK_EVERY: u64 = 16_384;

/// Writes a whole trace to `path` (see the module docs, "The file"): the section header, one
/// interface per plane, then `frames` in the order given. `keep_going` is called every
/// [`CHECK_EVERY`] frames; an error from it (an interruption) stops the writing, removes the
/// temporary file and is returned as is. Returns the number of frames written.
pub fn write_file(
    path: &Path,
    plane_names: &[String],
    frames: impl IntoIterator<Item = TraceFrame>,
    mut keep_going: impl FnMut() -> io::Result<()>,
) -> io::Result<u64> {
    let mut w = PcapngWriter::new(OutputFile::create(path)?, plane_names, &[])?;
    for f in frames {
        if w.frames_written() > 0 && w.frames_written() % CHECK_EVERY == 0 {
            keep_going()?;
        }
        w.write(&f)?;
    }
    let n = w.frames_written();
    w.finish()?.commit()?;
    Ok(n)
}

/// An output file written whole or not at all (see the module docs, "The file"). Write to it,
/// then [`OutputFile::commit`]; dropping it uncommitted removes the temporary file.
pub struct OutputFile {
    out: BufWriter<File>,
    /// The directory (opened without following links) and the (temporary, target) names in it,
    /// while the file is written under a temporary name.
    rename: Option<(nofollow::Dir, CString, CString)>,
}

/// Distinguishes the temporary files of one process.
static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

impl OutputFile {
    /// Opens `path` for writing: directly for a special file (FIFO, device, socket), through a
    /// temporary file in the same directory otherwise. A directory is refused, and so is a
    /// symbolic link anywhere on the path: the directories are opened one at a time with
    /// `O_NOFOLLOW`, the temporary file created in the last one with `O_EXCL | O_NOFOLLOW` (a
    /// link planted at its name is not followed), and the rename replaces a name, never a
    /// link's target. The front resolves the links it trusts before it passes a path
    /// (python/rtnetlab/io/output.py), so a link found here was put there since.
    pub fn create(path: &Path) -> io::Result<Self> {
        let name = match path.file_name() {
            Some(n) if path.components().next_back().is_some_and(|c| matches!(c, Component::Normal(_))) => n,
            _ => return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")),
        };
        let parent = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = nofollow::Dir::walk(parent)?;
        let name = CString::new(name.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the file name"))?;
        let (kind, mode) = match dir.stat(&name)? {
            None => (None, None),
            Some(st) => (Some(st.st_mode & libc::S_IFMT), Some(st.st_mode & 0o7777)),
        };
        match kind {
            Some(libc::S_IFLNK) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "is a symbolic link: not followed (write to its target directly if you trust it)",
                ))
            }
            Some(libc::S_IFDIR) => return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")),
            Some(libc::S_IFREG) | None => {}
            Some(_) => {
                // A FIFO or a device: its readers expect the data in it, not a file in its place.
                let file = dir.open_file(&name, libc::O_WRONLY, 0)?;
                return Ok(OutputFile { out: BufWriter::new(file), rename: None });
            }
        }
        loop {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let temp = CString::new(format!(".{}.{}-{n}.tmp", name.to_string_lossy(), std::process::id()))
                .expect("no NUL byte");
            match dir.open_file(&temp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o666) {
                Ok(file) => {
                    // A replaced file keeps its permission bits, set on the descriptor.
                    if let Some(mode) = mode {
                        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
                    }
                    return Ok(OutputFile { out: BufWriter::new(file), rename: Some((dir, temp, name)) });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Flushes the file and, when it was written under a temporary name, renames it over the
    /// target.
    pub fn commit(mut self) -> io::Result<()> {
        self.out.flush()?;
        if let Some((dir, temp, target)) = self.rename.take() {
            if let Err(e) = dir.rename(&temp, &target) {
                dir.unlink(&temp);
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some((dir, temp, _)) = self.rename.take() {
            dir.unlink(&temp);
        }
    }
}

/// Directories walked and files opened without following symbolic links (the `*at` calls on a
/// directory descriptor).
mod nofollow {
    use std::ffi::{CStr, CString};
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path};

    /// An open directory, reached one name at a time with `O_NOFOLLOW`.
    pub struct Dir(OwnedFd);

    fn check(r: libc::c_int) -> io::Result<libc::c_int> {
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }

    impl Dir {
        pub fn walk(path: &Path) -> io::Result<Dir> {
            const FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            let start: &CStr = if path.is_absolute() { c"/" } else { c"." };
            // SAFETY: a NUL-terminated path; the descriptor returned is owned here.
            let mut dir = Dir(unsafe { OwnedFd::from_raw_fd(check(libc::open(start.as_ptr(), FLAGS))?) });
            for c in path.components() {
                let name = match c {
                    Component::Normal(n) => CString::new(n.as_bytes()),
                    Component::ParentDir => CString::new(".."),
                    Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
                }
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
                // SAFETY: as above, relative to the directory held.
                let fd = unsafe { libc::openat(dir.0.as_raw_fd(), name.as_ptr(), FLAGS) };
                match check(fd) {
                    // SAFETY: a descriptor just opened, owned from here on.
                    Ok(fd) => dir = Dir(unsafe { OwnedFd::from_raw_fd(fd) }),
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!(
                                "{} is a symbolic link or not a directory: not followed",
                                name.to_string_lossy()
                            ),
                        ))
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(dir)
        }

        /// The entry `name` itself (a link is not followed), None when there is none.
        pub fn stat(&self, name: &CStr) -> io::Result<Option<libc::stat>> {
            // SAFETY: `st` is written by fstatat before it is read; the name is NUL-terminated.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            let r = unsafe {
                libc::fstatat(self.0.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW)
            };
            match check(r) {
                Ok(_) => Ok(Some(st)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }

        pub fn open_file(&self, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
            let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: a NUL-terminated name relative to the directory held; the descriptor
            // returned is owned by the File.
            let fd = check(unsafe {
                libc::openat(self.0.as_raw_fd(), name.as_ptr(), flags, mode as libc::c_uint)
            })?;
            Ok(unsafe { File::from_raw_fd(fd) })
        }

        pub fn rename(&self, from: &CStr, to: &CStr) -> io::Result<()> {
            let d = self.0.as_raw_fd();
            // SAFETY: NUL-terminated names relative to the directory held.
            check(unsafe { libc::renameat(d, from.as_ptr(), d, to.as_ptr()) }).map(|_| ())
        }

        pub fn unlink(&self, name: &CStr) {
            // SAFETY: as above; a failure (already gone) is of no consequence.
            unsafe { libc::unlinkat(self.0.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

/// Appends the AFDX frame for `f` without its FCS: `f.frame_bytes - 4` bytes (see the module
/// docs for the layout). `f.frame_bytes` must be within 64..=1518.
pub fn encode_frame(f: &TraceFrame, out: &mut Vec<u8>) {
    debug_assert!((MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&f.frame_bytes));
    let start = out.len();
    let len = (f.frame_bytes - FCS_BYTES) as usize; // captured bytes, sequence number last
    let vl = f.vl_id.to_be_bytes();
    let node = f.src_node.to_be_bytes();

    // Ethernet: multicast VL address, locally administered unicast source.
    out.extend_from_slice(&[0x03, 0x00, 0x00, 0x00, vl[0], vl[1]]);
    out.extend_from_slice(&[0x02, 0x00, 0x00, node[0], node[1], f.src_port]);
    out.extend_from_slice(&0x0800u16.to_be_bytes());

    // IPv4: the datagram ends just before the sequence number.
    let ip_len = (len - ETH_HEADER - 1) as u16;
    let ip_start = out.len();
    out.extend_from_slice(&[0x45, 0x00]); // version 4, IHL 5; DSCP/ECN 0
    out.extend_from_slice(&ip_len.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // identification 0, no flags, offset 0: never fragmented
    out.extend_from_slice(&[1, 17, 0, 0]); // TTL 1 (one AFDX network), UDP, checksum placeholder
    out.extend_from_slice(&[10, node[0], node[1], f.src_port]);
    out.extend_from_slice(&[224, 224, vl[0], vl[1]]);
    let sum = ipv4_checksum(&out[ip_start..ip_start + IP_HEADER]);
    out[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());

    // UDP: checksum 0 means "not computed", which IPv4 allows.
    out.extend_from_slice(&(UDP_PORT_BASE + f.src_port as u16).to_be_bytes());
    out.extend_from_slice(&UDP_PORT_BASE.to_be_bytes());
    out.extend_from_slice(&(ip_len - IP_HEADER as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0]);

    // Zero payload, then the sequence number as the last byte before the FCS.
    out.resize(start + len - 1, 0);
    out.push(f.seq);
    debug_assert_eq!(out.len() - start, len);
    debug_assert!(len - 1 - ETH_HEADER - IP_HEADER - UDP_HEADER >= 17);
}

/// RFC 791 header checksum: one's complement of the one's-complement sum of the 16-bit words
/// (computed with the checksum field zero; summing a correct header then gives 0xFFFF).
fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Pads to the next 32-bit boundary with zeros, as pcapng requires for every field it aligns.
fn pad32(b: &mut Vec<u8>) {
    b.resize(b.len().next_multiple_of(4), 0);
}

/// Appends one pcapng option: code, value length (unpadded), value, zero padding.
fn put_option(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    debug_assert!(value.len() <= u16::MAX as usize);
    put_u16(b, code);
    put_u16(b, value.len() as u16);
    b.extend_from_slice(value);
    pad32(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([b[at], b[at + 1]])
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    fn frame(frame_bytes: u32) -> TraceFrame {
        TraceFrame {
            time_ns: 0x1_2345_6789,
            plane: 1,
            vl_id: 0xABCD,
            seq: 0x5A,
            src_node: 0x0102,
            src_port: 7,
            frame_bytes,
        }
    }

    /// Splits a file into (type, whole block) pairs, checking what every block must satisfy.
    fn blocks(file: &[u8]) -> Vec<(u32, &[u8])> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < file.len() {
            let ty = u32_at(file, at);
            let len = u32_at(file, at + 4) as usize;
            assert_eq!(len % 4, 0, "block at {at} is not 32-bit aligned");
            assert!(len >= 12 && at + len <= file.len(), "block at {at} overruns the file");
            assert_eq!(u32_at(file, at + len - 4) as usize, len, "trailing length of block at {at}");
            out.push((ty, &file[at..at + len]));
            at += len;
        }
        assert_eq!(at, file.len());
        out
    }

    /// Options of a block from `at` on, as (code, value), checking the terminator and padding.
    fn options(block: &[u8], mut at: usize) -> Vec<(u16, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let code = u16_at(block, at);
            let len = u16_at(block, at + 2) as usize;
            if code == OPT_ENDOFOPT {
                assert_eq!(len, 0);
                assert_eq!(at + 4, block.len() - 4, "opt_endofopt must be the last option");
                return out;
            }
            out.push((code, block[at + 4..at + 4 + len].to_vec()));
            let padded = len.next_multiple_of(4);
            assert!(block[at + 4 + len..at + 4 + padded].iter().all(|&x| x == 0));
            at += 4 + padded;
        }
    }

    fn trace(frames: &[TraceFrame], rates: &[u64]) -> Vec<u8> {
        let names = vec!["plane A".to_string(), "plane B".to_string()];
        let mut w = PcapngWriter::new(Vec::new(), &names, rates).unwrap();
        for f in frames {
            w.write(f).unwrap();
        }
        assert_eq!(w.frames_written(), frames.len() as u64);
        w.finish().unwrap()
    }

    #[test]
    fn section_and_interface_blocks() {
        let file = trace(&[], &[100_000_000, 0]);
        let b = blocks(&file);
        assert_eq!(b.len(), 3);

        let (ty, shb) = b[0];
        assert_eq!(ty, SHB_TYPE);
        assert_eq!(&shb[8..12], &[0x4D, 0x3C, 0x2B, 0x1A], "byte-order magic, little-endian");
        assert_eq!((u16_at(shb, 12), u16_at(shb, 14)), (1, 0));
        assert_eq!(&shb[16..24], &[0xFF; 8], "section length unknown");
        assert_eq!(options(shb, 24), vec![(OPT_SHB_USERAPPL, b"rtnetlab".to_vec())]);

        for (i, name) in ["plane A", "plane B"].iter().enumerate() {
            let (ty, idb) = b[1 + i];
            assert_eq!(ty, IDB_TYPE);
            assert_eq!(u16_at(idb, 8), LINKTYPE_ETHERNET);
            assert_eq!(u16_at(idb, 10), 0);
            assert_eq!(u32_at(idb, 12), 1514);
            let mut want = vec![(OPT_IF_NAME, name.as_bytes().to_vec()), (OPT_IF_TSRESOL, vec![9])];
            if i == 0 {
                want.push((OPT_IF_SPEED, 100_000_000u64.to_le_bytes().to_vec()));
            }
            assert_eq!(options(idb, 16), want);
        }
        // Without rates, no if_speed anywhere.
        let file = trace(&[], &[]);
        assert!(blocks(&file)[1..].iter().all(|(_, idb)| options(idb, 16).len() == 2));
    }

    #[test]
    fn enhanced_packet_blocks() {
        for bytes in [64, 65, 66, 67, 100, 1517, 1518] {
            let f = frame(bytes);
            let file = trace(&[f], &[]);
            let b = blocks(&file);
            assert_eq!(b.len(), 4);
            let (ty, epb) = b[3];
            assert_eq!(ty, EPB_TYPE);
            assert_eq!(u32_at(epb, 8), 1, "interface id = plane");
            assert_eq!(u32_at(epb, 12), 0x1, "timestamp high word");
            assert_eq!(u32_at(epb, 16), 0x2345_6789, "timestamp low word");
            assert_eq!(u32_at(epb, 20), bytes - 4, "captured length");
            assert_eq!(u32_at(epb, 24), bytes - 4, "original length");
            let data_end = 28 + (bytes - 4) as usize;
            let mut want = Vec::new();
            encode_frame(&f, &mut want);
            assert_eq!(&epb[28..data_end], &want[..]);
            // Padding, no options, trailing length.
            assert_eq!(epb.len(), data_end.next_multiple_of(4) + 4);
            assert!(epb[data_end..epb.len() - 4].iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn afdx_frame_fields() {
        for bytes in [64, 200, 1518] {
            let mut fr = Vec::new();
            encode_frame(&frame(bytes), &mut fr);
            let len = bytes as usize - 4;
            assert_eq!(fr.len(), len);
            assert_eq!(&fr[0..6], &[0x03, 0x00, 0x00, 0x00, 0xAB, 0xCD], "VL destination MAC");
            assert_eq!(&fr[6..12], &[0x02, 0x00, 0x00, 0x01, 0x02, 0x07], "source MAC");
            assert_eq!(fr[0] & 1, 1, "destination is group (multicast)");
            assert_eq!(fr[6] & 3, 2, "source is unicast, locally administered");
            assert_eq!(&fr[12..14], &[0x08, 0x00]);

            let ip = &fr[14..34];
            assert_eq!(ip[0], 0x45);
            assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as u32, bytes - 19, "IP total length");
            assert_eq!(ip[9], 17);
            assert_eq!(&ip[12..16], &[10, 1, 2, 7]);
            assert_eq!(&ip[16..20], &[224, 224, 0xAB, 0xCD]);
            assert_eq!(ipv4_checksum(ip), 0, "header with its checksum sums to 0xFFFF");
            assert_ne!(&ip[10..12], &[0, 0]);

            let udp = &fr[34..42];
            assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), 0x2007);
            assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), 0x2000);
            assert_eq!(u16::from_be_bytes([udp[4], udp[5]]) as u32, bytes - 39, "UDP length");
            assert_eq!(&udp[6..8], &[0, 0]);

            assert_eq!(14 + u16::from_be_bytes([ip[2], ip[3]]) as usize, len - 1, "SN after IP");
            assert_eq!(fr[len - 1], 0x5A, "sequence number is the last byte before the FCS");
            assert!(fr[42..len - 1].iter().all(|&x| x == 0));
            assert!(len - 1 - 42 >= 17, "AFDX minimum payload");
        }
    }

    #[test]
    fn checksum_reference() {
        // The worked example from RFC 1071-style references (Wikipedia "IPv4 header checksum").
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01,
            0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&h), 0xb861);
        h[10..12].copy_from_slice(&0xb861u16.to_be_bytes());
        assert_eq!(ipv4_checksum(&h), 0);
    }

    #[test]
    fn rejects_bad_input_without_writing() {
        let names = vec!["plane A".to_string()];
        assert!(PcapngWriter::new(Vec::new(), &[], &[]).is_err());
        assert!(PcapngWriter::new(Vec::new(), &names, &[1, 2]).is_err());
        let mut w = PcapngWriter::new(Vec::new(), &names, &[]).unwrap();
        let before = w.out.len();
        let ok = TraceFrame { plane: 0, ..frame(64) };
        for bad in [
            TraceFrame { plane: 1, ..ok },
            TraceFrame { time_ns: -1, ..ok },
            TraceFrame { frame_bytes: 63, ..ok },
            TraceFrame { frame_bytes: 1519, ..ok },
        ] {
            let e = w.write(&bad).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
        assert_eq!(w.out.len(), before);
        assert_eq!(w.frames_written(), 0);
        w.write(&ok).unwrap();
        assert_eq!(w.frames_written(), 1);
    }

    /// A fresh directory of its own under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rtnetlab-pcap-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn frames(n: usize) -> impl Iterator<Item = TraceFrame> {
        (0..n).map(|i| TraceFrame { time_ns: i as i64, plane: 0, ..frame(64) })
    }

    fn plane_a() -> Vec<String> {
        vec!["A".to_string()]
    }

    #[test]
    fn new_file_written_whole_and_nothing_else_left() {
        let dir = scratch("new");
        let path = dir.join("t.pcapng");
        assert_eq!(write_file(&path, &plane_a(), frames(3), || Ok(())).unwrap(), 3);
        let file = fs::read(&path).unwrap();
        assert_eq!(blocks(&file).iter().filter(|(ty, _)| *ty == EPB_TYPE).count(), 3);
        assert_eq!(names(&dir), ["t.pcapng"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn interrupted_or_failed_writing_leaves_the_old_file_and_no_temporary() {
        let dir = scratch("interrupted");
        let path = dir.join("t.pcapng");
        fs::write(&path, b"the user's file").unwrap();
        let mut calls = 0;
        let e = write_file(&path, &plane_a(), frames(3 * CHECK_EVERY as usize), || {
            calls += 1;
            if calls == 2 {
                Err(io::Error::new(io::ErrorKind::Interrupted, "stop"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        assert_eq!(calls, 2, "checked every CHECK_EVERY frames");
        assert_eq!(fs::read(&path).unwrap(), b"the user's file");
        assert_eq!(names(&dir), ["t.pcapng"]);
        // An invalid frame after some valid ones: an error, and the same outcome.
        let bad = frames(5).chain(std::iter::once(TraceFrame { plane: 3, ..frame(64) }));
        assert!(write_file(&path, &plane_a(), bad, || Ok(())).is_err());
        assert_eq!(fs::read(&path).unwrap(), b"the user's file");
        assert_eq!(names(&dir), ["t.pcapng"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("perms");
        let real = dir.join("real.pcapng");
        fs::write(&real, b"old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&real, &plane_a(), frames(1), || Ok(())).unwrap();
        let meta = fs::metadata(&real).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert_eq!(blocks(&fs::read(&real).unwrap()).len(), 3);
        assert_eq!(names(&dir), ["real.pcapng"]);
        fs::remove_dir_all(dir).unwrap();
    }

    /// A symbolic link is never written through: not the output itself, not a directory on its
    /// way (O_NOFOLLOW), not a link planted at the temporary name (O_EXCL | O_NOFOLLOW). The
    /// file it points to is left as it was, and nothing is left behind.
    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_not_followed() {
        use std::os::unix::fs::symlink;
        let dir = scratch("links");
        let victim = dir.join("victim");
        fs::write(&victim, b"not yours").unwrap();
        let link = dir.join("link.pcapng");
        symlink(&victim, &link).unwrap();
        let e = write_file(&link, &plane_a(), frames(1), || Ok(())).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // A dangling link too (its target would be created).
        let dangling = dir.join("dangling.pcapng");
        symlink(dir.join("made-through-the-link"), &dangling).unwrap();
        assert!(write_file(&dangling, &plane_a(), frames(1), || Ok(())).is_err());
        // A directory on the way.
        let real_dir = dir.join("real");
        fs::create_dir(&real_dir).unwrap();
        symlink(&real_dir, dir.join("via")).unwrap();
        let e = write_file(&dir.join("via").join("t.pcapng"), &plane_a(), frames(1), || Ok(())).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(names(&real_dir).is_empty());
        // Links planted at the next temporary names this process will try: skipped, not followed.
        let next = TEMP_COUNTER.load(Ordering::Relaxed);
        let target = dir.join("t.pcapng");
        for n in next..next + 3 {
            symlink(&victim, dir.join(format!(".t.pcapng.{}-{n}.tmp", std::process::id()))).unwrap();
        }
        assert_eq!(write_file(&target, &plane_a(), frames(2), || Ok(())).unwrap(), 2);
        assert_eq!(blocks(&fs::read(&target).unwrap()).len(), 4);
        assert_eq!(fs::read(&victim).unwrap(), b"not yours");
        assert!(!dir.join("made-through-the-link").exists());
        let left: Vec<String> = names(&dir).into_iter().filter(|n| !n.ends_with(".tmp")).collect();
        assert_eq!(left, ["dangling.pcapng", "link.pcapng", "real", "t.pcapng", "via", "victim"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_into_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = scratch("fifo");
        let fifo = dir.join("trace.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        assert_eq!(write_file(&fifo, &plane_a(), frames(2), || Ok(())).unwrap(), 2);
        // Checked before joining: a reader of a FIFO replaced by a file could wait for ever.
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
        let got = reader.join().unwrap();
        assert_eq!(blocks(&got).len(), 4, "the reader of the FIFO got the trace");
        assert_eq!(names(&dir), ["trace.fifo"]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = scratch("dir");
        let e = write_file(&dir, &plane_a(), frames(1), || Ok(())).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        assert!(names(&dir).is_empty());
        fs::remove_dir_all(dir).unwrap();
    }
}
