// An AFDX network in ns-3: what a researcher writes with the reference network simulator.
//
//   ns3_afdx NETWORK.txt DURATION_NS [synchronized|random] [max|min|uniform] [SEED]
//
// NETWORK.txt is written by benchmarks/peers/ns3_export.py from the rtnetlab model: ports (node,
// peer, rate, propagation), nodes (technological and receive latency), each flow's route tree as
// crossings (port, route delivered, next crossings) and each flow's BAG, frame sizes on the wire
// and first crossings per plane. Every egress port is a PointToPointNetDevice on its own channel
// (FIFO transmit queue, unbounded, at the link rate, propagation delay on the channel); the packet
// carries the frame plus preamble and inter-frame gap (its PPP header included), so that its
// transmission time is the frame's on the wire, as in rtnetlab. A switch forwards a received frame
// to the next crossings' ports after its technological latency (store-and-forward); a destination
// records the latency from the frame's entry into its source port to its last bit plus the
// receive latency. A frame-hop is counted when a frame is handed to an egress port.
// Prints one JSON line: frame_hops, events, wall_s (the event loop) and latency totals.

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Which crossing a copy is at, and when it entered its source port.
class CrossingTag : public Tag
{
  public:
    uint32_t crossing = 0;
    int64_t start_ns = 0;

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("CrossingTag").SetParent<Tag>().AddConstructor<CrossingTag>();
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 12; }
    void Serialize(TagBuffer i) const override
    {
        i.WriteU32(crossing);
        i.WriteU64(static_cast<uint64_t>(start_ns));
    }
    void Deserialize(TagBuffer i) override
    {
        crossing = i.ReadU32();
        start_ns = static_cast<int64_t>(i.ReadU64());
    }
    void Print(std::ostream& os) const override { os << crossing << "@" << start_ns; }
};

struct Port
{
    uint32_t node, peer;
    uint64_t rate_bps;
    int64_t prop_ns;
    Ptr<PointToPointNetDevice> tx;
};

struct Crossing
{
    uint32_t port;
    int64_t deliver; // route, or -1
    std::vector<uint32_t> next;
};

struct Start
{
    std::vector<uint32_t> firsts;
};

struct Flow
{
    int64_t bag_ns;
    uint32_t wire_max, wire_min; // bytes, preamble and gap included
    int64_t source_latency_ns;
    std::vector<Start> planes;
};

struct Route
{
    uint64_t count = 0;
    int64_t min_ns = INT64_MAX, max_ns = 0;
    double sum_ns = 0;
};

std::vector<Port> g_ports;
std::vector<int64_t> g_latency, g_receive;
std::vector<Crossing> g_crossings;
std::vector<Flow> g_flows;
std::vector<Route> g_routes;
uint64_t g_frame_hops = 0;
std::string g_sizes = "max";
std::mt19937_64 g_rng;

// The PPP header the device adds.
constexpr uint32_t PPP_HEADER = 2;

void
SendAt(uint32_t crossing, int64_t start_ns, uint32_t wire)
{
    Ptr<Packet> p = Create<Packet>(wire - PPP_HEADER);
    CrossingTag tag;
    tag.crossing = crossing;
    tag.start_ns = start_ns;
    p->AddPacketTag(tag);
    g_frame_hops++;
    g_ports[g_crossings[crossing].port].tx->Send(p, Mac48Address::GetBroadcast(), 0x0800);
}

bool
Receive(Ptr<NetDevice>, Ptr<const Packet> packet, uint16_t, const Address&)
{
    CrossingTag tag;
    packet->PeekPacketTag(tag);
    const Crossing& c = g_crossings[tag.crossing];
    const Port& port = g_ports[c.port];
    uint32_t wire = packet->GetSize() + PPP_HEADER;
    if (c.deliver >= 0)
    {
        int64_t ns = Simulator::Now().GetNanoSeconds() + g_receive[port.peer] - tag.start_ns;
        Route& r = g_routes[c.deliver];
        r.count++;
        r.sum_ns += ns;
        r.min_ns = std::min(r.min_ns, ns);
        r.max_ns = std::max(r.max_ns, ns);
    }
    int64_t latency = g_latency[port.peer];
    for (uint32_t d : c.next)
    {
        if (latency == 0)
        {
            SendAt(d, tag.start_ns, wire);
        }
        else
        {
            Simulator::Schedule(NanoSeconds(latency), &SendAt, d, tag.start_ns, wire);
        }
    }
    return true;
}

void
Release(uint32_t f)
{
    const Flow& flow = g_flows[f];
    uint32_t wire = flow.wire_max;
    if (g_sizes == "min")
    {
        wire = flow.wire_min;
    }
    else if (g_sizes == "uniform")
    {
        wire = flow.wire_min + 8 * 0 +
               static_cast<uint32_t>(g_rng() % (flow.wire_max - flow.wire_min + 1));
    }
    int64_t now = Simulator::Now().GetNanoSeconds();
    for (const Start& s : flow.planes)
    {
        for (uint32_t c : s.firsts)
        {
            if (flow.source_latency_ns == 0)
            {
                SendAt(c, now, wire);
            }
            else
            {
                Simulator::Schedule(NanoSeconds(flow.source_latency_ns), &SendAt, c, now, wire);
            }
        }
    }
    Simulator::Schedule(NanoSeconds(flow.bag_ns), &Release, f);
}

void
Read(const char* path)
{
    std::ifstream in(path);
    if (!in)
    {
        std::cerr << path << ": cannot be read\n";
        std::exit(2);
    }
    std::string word;
    size_t n;
    in >> word >> n;
    g_latency.resize(n);
    g_receive.resize(n);
    for (size_t i = 0; i < n; i++)
    {
        in >> g_latency[i] >> g_receive[i];
    }
    in >> word >> n;
    g_ports.resize(n);
    for (auto& p : g_ports)
    {
        in >> p.node >> p.peer >> p.rate_bps >> p.prop_ns;
    }
    in >> word >> n;
    g_crossings.resize(n);
    for (auto& c : g_crossings)
    {
        size_t k;
        in >> c.port >> c.deliver >> k;
        c.next.resize(k);
        for (auto& d : c.next)
        {
            in >> d;
        }
    }
    in >> word >> n;
    g_flows.resize(n);
    for (auto& f : g_flows)
    {
        size_t planes;
        in >> f.bag_ns >> f.wire_max >> f.wire_min >> f.source_latency_ns >> planes;
        f.planes.resize(planes);
        for (auto& s : f.planes)
        {
            size_t k;
            in >> k;
            s.firsts.resize(k);
            for (auto& c : s.firsts)
            {
                in >> c;
            }
        }
    }
    in >> word >> n;
    g_routes.resize(n);
    if (!in)
    {
        std::cerr << path << ": not a network written by ns3_export.py\n";
        std::exit(2);
    }
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc < 3)
    {
        std::cerr << "usage: ns3_afdx NETWORK.txt DURATION_NS [synchronized|random] [max|min|uniform] "
                     "[SEED]\n";
        return 2;
    }
    Read(argv[1]);
    int64_t duration_ns = std::stoll(argv[2]);
    std::string release = argc > 3 ? argv[3] : "synchronized";
    g_sizes = argc > 4 ? argv[4] : "max";
    g_rng.seed(argc > 5 ? std::stoull(argv[5]) : 1);
    Time::SetResolution(Time::NS);

    std::vector<Ptr<Node>> nodes(g_latency.size());
    for (auto& n : nodes)
    {
        n = CreateObject<Node>();
    }
    for (auto& p : g_ports)
    {
        Ptr<PointToPointChannel> ch = CreateObject<PointToPointChannel>();
        ch->SetAttribute("Delay", TimeValue(NanoSeconds(p.prop_ns)));
        Ptr<PointToPointNetDevice> tx = CreateObject<PointToPointNetDevice>();
        Ptr<PointToPointNetDevice> rx = CreateObject<PointToPointNetDevice>();
        for (auto dev : {tx, rx})
        {
            dev->SetAddress(Mac48Address::Allocate());
            dev->SetDataRate(DataRate(p.rate_bps));
            Ptr<DropTailQueue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
            q->SetMaxSize(QueueSize("100000000p"));
            dev->SetQueue(q);
        }
        nodes[p.node]->AddDevice(tx);
        nodes[p.peer]->AddDevice(rx);
        tx->Attach(ch);
        rx->Attach(ch);
        rx->SetReceiveCallback(MakeCallback(&Receive));
        p.tx = tx;
    }
    for (uint32_t f = 0; f < g_flows.size(); f++)
    {
        int64_t phase = release == "random" ? static_cast<int64_t>(g_rng() % g_flows[f].bag_ns) : 0;
        Simulator::Schedule(NanoSeconds(phase), &Release, f);
    }
    Simulator::Stop(NanoSeconds(duration_ns + 1));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    uint64_t count = 0;
    double sum = 0;
    int64_t max_ns = 0;
    for (const Route& r : g_routes)
    {
        count += r.count;
        sum += r.sum_ns;
        max_ns = std::max(max_ns, r.max_ns);
    }
    std::printf("{\"frame_hops\": %llu, \"events\": %llu, \"wall_s\": %.6f, \"delivered\": %llu, "
                "\"mean_latency_us\": %.6f, \"max_latency_us\": %.3f}\n",
                static_cast<unsigned long long>(g_frame_hops),
                static_cast<unsigned long long>(events),
                wall,
                static_cast<unsigned long long>(count),
                count ? sum / count / 1e3 : 0.0,
                max_ns / 1e3);
    return 0;
}
