-- Wireshark dissector for rtnetlab's testbed frames (docs/TESTBED.md, crates/testbed/src/frame.rs).
--
-- A testbed frame is an AFDX frame: destination MAC 03:00:00:00:VV:VV (VV:VV the VL id), IPv4 to
-- 224.224.VV.VV with the class in the TOS byte (DSCP = class index + 1) and the host delay in the
-- identification (us), UDP to port 0x5254; its UDP payload starts with the measurement
-- (emission time, frame number, start offset), and the byte after the UDP datagram is the AFDX
-- sequence number (Wireshark shows it as an Ethernet trailer too).
--
-- Install: copy to ~/.local/lib/wireshark/plugins/ (or run `tshark -X lua_script:rtnetlab.lua`).
-- Filters: rtnetlab.vl == 1, rtnetlab.seq, rtnetlab.baseline, rtnetlab.host_delay_us > 100.

local p = Proto("rtnetlab", "rtnetlab testbed frame (AFDX)")

local f = p.fields
f.vl = ProtoField.uint16("rtnetlab.vl", "VL id", base.DEC)
f.class = ProtoField.uint8("rtnetlab.class", "Class field (DSCP)", base.DEC)
f.host_delay = ProtoField.uint16("rtnetlab.host_delay_us", "Host delay (us)", base.DEC)
f.emit = ProtoField.uint64("rtnetlab.emit_ns", "Emission (ns since 1970)", base.DEC)
f.emit_time = ProtoField.absolute_time("rtnetlab.emit_time", "Emission", base.UTC)
f.number = ProtoField.uint32("rtnetlab.number", "Frame number", base.DEC, nil, 0x7fffffff)
f.baseline = ProtoField.bool("rtnetlab.baseline", "Idle baseline", 32, nil, 0x80000000)
f.offset = ProtoField.uint32("rtnetlab.start_offset_ns", "Start offset (ns)", base.DEC)
f.seq = ProtoField.uint8("rtnetlab.seq", "AFDX sequence number", base.DEC)
f.latency = ProtoField.double("rtnetlab.age_us", "Age at capture (us)")

local ip_tos = Field.new("ip.dsfield")
local ip_id = Field.new("ip.id")
local ip_dst = Field.new("ip.dst")

function p.dissector(buf, pinfo, tree)
    if buf:len() < 16 then return 0 end
    local t = tree:add(p, buf(0, 16), "rtnetlab testbed frame")
    -- The VL id is in the IP destination, 224.224.VV.VV (and in the destination MAC).
    local tos = ip_tos()
    local id = ip_id()
    local hi, lo = tostring(ip_dst()):match("^224%.224%.(%d+)%.(%d+)$")
    if hi == nil then return 0 end
    local vl = tonumber(hi) * 256 + tonumber(lo)
    pinfo.cols.protocol = "rtnetlab"
    t:add(f.vl, vl):set_generated()
    if tos then t:add(f.class, bit.rshift(tos.value, 2)):set_generated() end
    if id then t:add(f.host_delay, id.value):set_generated() end
    local emit = buf(0, 8):uint64()
    t:add(f.emit, buf(0, 8))
    local secs = (emit / 1000000000):tonumber()
    local nsecs = (emit % 1000000000):tonumber()
    t:add(f.emit_time, buf(0, 8), NSTime.new(secs, nsecs))
    t:add(f.number, buf(8, 4))
    t:add(f.baseline, buf(8, 4))
    t:add(f.offset, buf(12, 4))
    local start = emit + buf(12, 4):uint()
    local age = (pinfo.abs_ts - (start:tonumber() / 1e9)) * 1e6
    t:add(f.latency, age):set_generated()
    local whole = buf:len()
    pinfo.cols.info = string.format("VL %d #%d%s", vl, buf(8, 4):uint() % 0x80000000,
        buf(8, 4):uint() >= 0x80000000 and " (baseline)" or "")
    return whole
end

-- The sequence number is outside the UDP payload: a post-dissector reads the frame's last byte.
local seq_post = Proto("rtnetlab_seq", "rtnetlab AFDX sequence number")
local udp_dport = Field.new("udp.dstport")
function seq_post.dissector(buf, pinfo, tree)
    local d = udp_dport()
    if d == nil or d.value ~= 0x5254 then return end
    local n = buf:len()
    local t = tree:add(p, buf(n - 1, 1), "rtnetlab AFDX sequence number")
    t:add(f.seq, buf(n - 1, 1))
end
register_postdissector(seq_post)

DissectorTable.get("udp.port"):add(0x5254, p)
