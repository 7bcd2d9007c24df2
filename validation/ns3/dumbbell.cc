// polycc cross-validation: a TCP dumbbell in ns-3 (Debian's libns3-dev 3.37) set up to match the
// polycc simulator's model as closely as ns-3 allows. One run prints one JSON line on stdout.
//
//   sender_i --access--> R1 ==bottleneck==> R2 --access (one-way rtt_i/2)--> receiver_i
//
// What is matched, and how (VALIDATION.md has the full table):
// - Bottleneck: R1's point-to-point device, drop-tail queue of --queue packets, no queue disc (the
//   default FqCoDel that Ipv4AddressHelper installs is removed from every device). Its rate is
//   --rate x 1502/1500 because ns-3 puts a 2-byte PPP header on each 1500-byte IP packet, so the
//   link carries --rate worth of 1500-byte IP packets, as polycc's link carries 1500-byte packets.
// - Everything else is fast: access links and the bottleneck's reverse direction (ACKs) run at
//   --fast-factor x rate with queues that never overflow (polycc: the sender feeds the bottleneck
//   queue directly and the ACK path has unlimited capacity).
// - Base RTT: all propagation delay sits on the receiver's access link (one-way rtt_i/2), as
//   polycc puts rtt/2 after the bottleneck in each direction.
// - Random loss: per packet, on data packets entering R1 (before the bottleneck queue), as polycc
//   draws loss on entry to the link. A RateErrorModel (unit packet) decides; a thin wrapper exempts
//   packets without payload (SYN, handshake ACK) because polycc has no handshake to lose.
// - Sojourn: time from the bottleneck queue's Enqueue to its Dequeue trace (the device dequeues
//   when it starts sending), like polycc's enqueue-to-start-of-service sojourn.
// - Goodput: unique payload bytes that reached the receiver over the flow's active time (start to
//   the end): what the PacketSink read plus what waits out of order in the receive buffer at the
//   end (polycc counts every new segment on arrival, in order or not).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Bump when a change alters results: compare.py keys its cache of ns-3 results on it.
constexpr int kModelVersion = 2;
// Bump a CCA's entry when a change alters the results of that CCA only: compare.py adds it to that
// CCA's cache key, so the cached runs of every other CCA stay valid. compare.py reads the entries
// with a regular expression: keep one {"name", version} pair per line.
// hybla 1: reference RTT (TcpHybla::RRTT) 25 ms as Linux and polycc, not ns-3's 50 ms.
const std::map<std::string, int> kCcaModelVersion = {
    {"hybla", 1},
};

// Bytes ns-3 adds to each IP packet on a point-to-point link.
constexpr double kPppHeader = 2.0;
// Bytes of a full IP packet: MSS 1448 + TCP 20 + timestamp option 12 + IP 20.
constexpr double kIpPacket = 1500.0;

// Decides per packet with an inner RateErrorModel, but only for packets that carry payload.
class DataOnlyErrorModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("polycc::DataOnlyErrorModel")
                                .SetParent<ErrorModel>()
                                .AddConstructor<DataOnlyErrorModel>();
        return tid;
    }

    void Configure(double rate, int64_t stream, uint64_t* counter)
    {
        m_inner = CreateObject<RateErrorModel>();
        m_inner->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        m_inner->SetRate(rate);
        m_inner->AssignStreams(stream);
        m_counter = counter;
    }

  private:
    bool DoCorrupt(Ptr<Packet> p) override
    {
        // PPP + IP + TCP headers with options stay below 100 bytes; data packets are 1502.
        if (p->GetSize() < 100 || !m_inner)
        {
            return false;
        }
        bool lost = m_inner->IsCorrupt(p);
        if (lost && m_counter)
        {
            ++*m_counter;
        }
        return lost;
    }

    void DoReset() override
    {
    }

    Ptr<RateErrorModel> m_inner;
    uint64_t* m_counter = nullptr;
};

// RTO as Linux computes it: srtt + max(4 rttvar, MinRto). Linux keeps rttvar at least tcp_rto_min
// (200 ms) (tcp_rtt_estimator's mdev_max), while ns-3 applies MinRto to the whole RTO:
// max(MinRto, srtt + 4 rttvar). With a full drop-tail queue the RTT is steady, rttvar falls to
// almost nothing, and ns-3's RTO shrinks to srtt: it then expires a fraction of a millisecond before
// the ACK of the first fast retransmission returns (it was sent a few packets after the last new
// ACK restarted the timer), a spurious timeout that collapses cwnd to one segment. Flooring the
// variation at MinRto/4 gives Linux's rule and removes that artefact.
class LinuxRttEstimator : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("polycc::LinuxRttEstimator")
                                .SetParent<RttMeanDeviation>()
                                .AddConstructor<LinuxRttEstimator>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    static Time s_variationFloor;

    void Measurement(Time m) override
    {
        RttMeanDeviation::Measurement(m);
        if (m_estimatedVariation < s_variationFloor)
        {
            m_estimatedVariation = s_variationFloor;
        }
    }

    Ptr<RttEstimator> Copy() const override
    {
        return CopyObject<LinuxRttEstimator>(this);
    }
};

Time LinuxRttEstimator::s_variationFloor = MilliSeconds(50);

NS_OBJECT_ENSURE_REGISTERED(LinuxRttEstimator);

struct BottleneckStats
{
    std::deque<int64_t> enqueuedAt; // FIFO: enqueue times of the packets in the queue
    std::vector<int64_t> sojournNs;
    uint64_t drops = 0;
    uint64_t txBytes = 0; // bytes whose transmission ended, PPP header included
    uint64_t randomLosses = 0;
};

BottleneckStats g_bn;

void
OnEnqueue(Ptr<const Packet>)
{
    g_bn.enqueuedAt.push_back(Simulator::Now().GetNanoSeconds());
}

void
OnDequeue(Ptr<const Packet>)
{
    if (g_bn.enqueuedAt.empty())
    {
        return;
    }
    g_bn.sojournNs.push_back(Simulator::Now().GetNanoSeconds() - g_bn.enqueuedAt.front());
    g_bn.enqueuedAt.pop_front();
}

void
OnDrop(Ptr<const Packet>)
{
    ++g_bn.drops;
}

void
OnTxEnd(Ptr<const Packet> p)
{
    g_bn.txBytes += p->GetSize();
}

struct FlowStats
{
    uint64_t retransmits = 0;
    uint64_t repeatRetransmits = 0; // a segment retransmitted a second time or more
    std::map<uint32_t, uint32_t> retxCount;
    uint64_t rtos = 0; // entries into CA_LOSS (a timeout while already in CA_LOSS is not one)
    uint64_t rtoExpiries = 0; // every expiry of the retransmission timer, backed-off ones too
    // Expiries whose first resent segment had been retransmitted before: that retransmission was
    // lost (ACKs are never lost here), which ns-3 3.37, without RACK, finds only by the timer.
    uint64_t rtoLostRetransmissions = 0;
    bool rtoResendPending = false; // the next retransmission is the one the expiry sends
    uint64_t recoveries = 0;
    uint32_t highestEnd = 0; // highest sequence number (relative) sent so far, plus length
    bool haveSeq = false;
    uint32_t isn = 0;
    double rttSumMs = 0;
    uint64_t rttCount = 0;
    FILE* cwndOut = nullptr;
    uint32_t cwnd = 0;
    uint32_t ssthresh = 0;
};

std::vector<FlowStats> g_flows;

void
OnTx(uint32_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() == 0)
    {
        return;
    }
    FlowStats& f = g_flows[i];
    uint32_t seq = h.GetSequenceNumber().GetValue();
    if (!f.haveSeq)
    {
        f.haveSeq = true;
        f.isn = seq;
    }
    uint32_t end = seq - f.isn + p->GetSize();
    if (end <= f.highestEnd)
    {
        ++f.retransmits;
        const bool resentBefore = ++f.retxCount[seq - f.isn] > 1;
        if (resentBefore)
        {
            ++f.repeatRetransmits;
        }
        if (f.rtoResendPending)
        {
            f.rtoResendPending = false;
            if (resentBefore)
            {
                ++f.rtoLostRetransmissions;
            }
        }
    }
    else
    {
        f.highestEnd = end;
    }
}

void
OnCongState(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        ++g_flows[i].rtos;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g_flows[i].recoveries;
    }
}

// ns-3 doubles the RTO on every expiry of the retransmission timer (RFC 6298 5.5, capped at 60 s,
// TcpSocketBase::ReTxTimeout) and nowhere else; a new RTT estimate sets it from srtt and rttvar,
// which does not land on exactly twice the old value. So a doubling is an expiry.
void
OnRto(uint32_t i, Time oldRto, Time newRto)
{
    const Time cap = Seconds(60);
    if (oldRto.IsStrictlyPositive() && (newRto == oldRto + oldRto || (newRto == cap && oldRto + oldRto > cap)))
    {
        ++g_flows[i].rtoExpiries;
        g_flows[i].rtoResendPending = true;
    }
}

void
OnRtt(uint32_t i, Time, Time rtt)
{
    g_flows[i].rttSumMs += rtt.GetSeconds() * 1e3;
    ++g_flows[i].rttCount;
}

void
WriteWindow(uint32_t i)
{
    FlowStats& f = g_flows[i];
    if (f.cwndOut)
    {
        std::fprintf(f.cwndOut, "%.6f,%u,%u\n", Simulator::Now().GetSeconds(), f.cwnd, f.ssthresh);
    }
}

void
OnCwnd(uint32_t i, uint32_t, uint32_t cwnd)
{
    g_flows[i].cwnd = cwnd;
    WriteWindow(i);
}

void
OnSsthresh(uint32_t i, uint32_t, uint32_t ssthresh)
{
    g_flows[i].ssthresh = ssthresh;
    WriteWindow(i);
}

// The congestion-control type ns-3 uses for a polycc-style name.
std::string
TcpTypeFor(const std::string& cca)
{
    static const std::map<std::string, std::string> names = {
        {"newreno", "ns3::TcpNewReno"},
        {"cubic", "ns3::TcpCubic"},
        {"vegas", "ns3::TcpVegas"},
        {"bbr", "ns3::TcpBbr"},
        {"ledbat", "ns3::TcpLedbat"},
        {"westwood", "ns3::TcpWestwood"}, // Westwood+ via ProtocolType, set in main
        {"hybla", "ns3::TcpHybla"},
        {"illinois", "ns3::TcpIllinois"},
        {"htcp", "ns3::TcpHtcp"},
        {"linuxreno", "ns3::TcpLinuxReno"},
    };
    auto it = names.find(cca);
    if (it == names.end())
    {
        std::cerr << "dumbbell: unknown --cca " << cca
                  << "; known: newreno cubic vegas bbr ledbat westwood hybla illinois htcp "
                     "linuxreno\n";
        std::exit(2);
    }
    return it->second;
}

std::vector<std::string>
Split(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

void
ConnectSocketTraces(uint32_t i, Ptr<BulkSendApplication> app)
{
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(app->GetSocket());
    if (!sock)
    {
        return;
    }
    sock->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, i));
    sock->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, i));
    sock->TraceConnectWithoutContext("RTT", MakeBoundCallback(&OnRtt, i));
    sock->TraceConnectWithoutContext("RTO", MakeBoundCallback(&OnRto, i));
    sock->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, i));
    sock->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsthresh, i));
}

std::string
JsonEscape(const std::string& s)
{
    std::string out;
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string rate = "10Mbps";
    std::string rtts = "20ms";
    uint32_t nFlows = 1;
    std::string cca = "newreno";
    uint32_t queuePackets = 100;
    double loss = 0.0;
    double duration = 10.0;
    uint32_t seed = 1;
    double minRtoMs = 200.0;
    uint32_t delAck = 1;
    bool sack = true;
    std::string recovery = "prr";
    std::string rto = "linux";
    std::string pacing = "auto";
    uint32_t mss = 1448;
    uint32_t initCwnd = 10;
    double fastFactor = 100.0;
    std::string starts = "";
    std::string cwndPrefix = "";

    CommandLine cmd(__FILE__);
    cmd.AddValue("rate", "bottleneck rate of 1500-byte IP packets (ns-3 DataRate string)", rate);
    cmd.AddValue("rtt", "base RTT per flow (one value, or a comma list of one per flow)", rtts);
    cmd.AddValue("flows", "number of flows", nFlows);
    cmd.AddValue("cca", "newreno|cubic|vegas|bbr|ledbat|westwood|hybla|illinois|htcp", cca);
    cmd.AddValue("queue", "bottleneck drop-tail capacity in packets", queuePackets);
    cmd.AddValue("loss", "random loss probability of data packets entering the bottleneck", loss);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "run number of ns-3's RNG (seed 1, run = this)", seed);
    cmd.AddValue("min-rto", "TcpSocketBase::MinRto in ms", minRtoMs);
    cmd.AddValue("delack", "TcpSocket::DelAckCount (1 = ACK every segment)", delAck);
    cmd.AddValue("sack", "TcpSocketBase::Sack", sack);
    cmd.AddValue("recovery", "prr|classic (TcpL4Protocol::RecoveryType)", recovery);
    cmd.AddValue("rto",
                 "linux: srtt + max(4 rttvar, MinRto); ns3: max(MinRto, srtt + 4 rttvar)",
                 rto);
    cmd.AddValue("pacing", "auto (only BBR) | on | off", pacing);
    cmd.AddValue("mss", "TcpSocket::SegmentSize", mss);
    cmd.AddValue("init-cwnd", "TcpSocket::InitialCwnd in segments", initCwnd);
    cmd.AddValue("fast-factor", "rate of the non-bottleneck links as a multiple of --rate",
                 fastFactor);
    cmd.AddValue("starts", "start time per flow in seconds (comma list; default all 0)", starts);
    cmd.AddValue("cwnd-trace", "write <prefix><flow>.csv: time,cwnd,ssthresh (bytes)", cwndPrefix);
    cmd.Parse(argc, argv);

    const std::string tcpType = TcpTypeFor(cca);
    std::vector<std::string> rttList = Split(rtts);
    if (rttList.size() != 1 && rttList.size() != nFlows)
    {
        std::cerr << "dumbbell: --rtt needs one value or one per flow\n";
        return 2;
    }
    std::vector<double> startList(nFlows, 0.0);
    if (!starts.empty())
    {
        std::vector<std::string> s = Split(starts);
        if (s.size() != nFlows)
        {
            std::cerr << "dumbbell: --starts needs one value per flow\n";
            return 2;
        }
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            startList[i] = std::stod(s[i]);
        }
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP settings (VALIDATION.md explains each against polycc's model).
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAck));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 27));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 27));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(minRtoMs)));
    const bool pace = pacing == "on" || (pacing == "auto" && cca == "bbr");
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(pace));
    if (recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    }
    else if (recovery != "prr")
    {
        std::cerr << "dumbbell: --recovery is prr or classic\n";
        return 2;
    }
    if (rto == "linux")
    {
        LinuxRttEstimator::s_variationFloor = MilliSeconds(minRtoMs) / 4;
        Config::SetDefault("ns3::TcpL4Protocol::RttEstimatorType",
                           TypeIdValue(LinuxRttEstimator::GetTypeId()));
    }
    else if (rto != "ns3")
    {
        std::cerr << "dumbbell: --rto is linux or ns3\n";
        return 2;
    }
    if (cca == "hybla")
    {
        // Linux tcp_hybla.c (and polycc) use a 25 ms reference RTT; ns-3 defaults to 50 ms.
        Config::SetDefault("ns3::TcpHybla::RRTT", TimeValue(MilliSeconds(25)));
    }
    if (cca == "westwood")
    {
        Config::SetDefault("ns3::TcpWestwood::ProtocolType", EnumValue(TcpWestwood::WESTWOODPLUS));
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(tcpType)));

    const DataRate bottleneckRate(rate);
    const double bps = static_cast<double>(bottleneckRate.GetBitRate());
    const DataRate wireRate(static_cast<uint64_t>(bps * (kIpPacket + kPppHeader) / kIpPacket));
    const DataRate fastRate(static_cast<uint64_t>(bps * fastFactor));

    NodeContainer senders;
    senders.Create(nFlows);
    NodeContainer receivers;
    receivers.Create(nFlows);
    NodeContainer routers;
    routers.Create(2);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(wireRate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    NetDeviceContainer bnDevs = bottleneck.Install(routers.Get(0), routers.Get(1));
    // The reverse direction carries only ACKs: make it fast, as polycc's unlimited reverse path.
    Ptr<PointToPointNetDevice> r2Dev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(1));
    r2Dev->SetDataRate(fastRate);
    r2Dev->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1000000));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(fastRate));
    access.SetQueue("ns3::DropTailQueue<Packet>",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000000)));
    std::vector<NetDeviceContainer> sendDevs;
    std::vector<NetDeviceContainer> recvDevs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        access.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
        sendDevs.push_back(access.Install(senders.Get(i), routers.Get(0)));
        Time rtt(rttList[rttList.size() == 1 ? 0 : i]);
        access.SetChannelAttribute("Delay", TimeValue(rtt / 2));
        recvDevs.push_back(access.Install(routers.Get(1), receivers.Get(i)));
    }

    InternetStackHelper stack;
    stack.InstallAll();

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(bnDevs);
    tch.Uninstall(bnDevs);
    std::vector<Ipv4InterfaceContainer> recvIfs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        std::ostringstream a;
        a << "10.1." << i << ".0";
        addr.SetBase(a.str().c_str(), "255.255.255.0");
        addr.Assign(sendDevs[i]);
        tch.Uninstall(sendDevs[i]);
        std::ostringstream b;
        b << "10.2." << i << ".0";
        addr.SetBase(b.str().c_str(), "255.255.255.0");
        recvIfs.push_back(addr.Assign(recvDevs[i]));
        tch.Uninstall(recvDevs[i]);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Random loss on data entering R1 from each sender.
    if (loss > 0)
    {
        for (uint32_t i = 0; i < nFlows; ++i)
        {
            Ptr<DataOnlyErrorModel> em = CreateObject<DataOnlyErrorModel>();
            em->Configure(loss, 100 + i, &g_bn.randomLosses);
            DynamicCast<PointToPointNetDevice>(sendDevs[i].Get(1))->SetReceiveErrorModel(em);
        }
    }

    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(bnDevs.Get(0));
    Ptr<Queue<Packet>> q = bnDev->GetQueue();
    q->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    q->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
    q->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    // Without a queue disc, the traffic-control layer holds back a packet while the device queue
    // is full (stopped) and drops it there: that is the drop-tail drop.
    Ptr<TrafficControlLayer> tc = routers.Get(0)->GetObject<TrafficControlLayer>();
    if (!tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&OnDrop)))
    {
        std::cerr << "dumbbell: cannot trace TrafficControlLayer drops\n";
        return 1;
    }
    bnDev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnTxEnd));

    g_flows.resize(nFlows);
    std::vector<Ptr<PacketSink>> sinks;
    const uint16_t basePort = 5000;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        uint16_t port = basePort + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        // No Stop: a stopped sink closes its sockets, and the receive buffers are read at the end.
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory",
                           InetSocketAddress(recvIfs[i].GetAddress(1), port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss * 16));
        ApplicationContainer srcApp = src.Install(senders.Get(i));
        srcApp.Start(Seconds(startList[i]));
        Ptr<BulkSendApplication> bulk = DynamicCast<BulkSendApplication>(srcApp.Get(0));
        // The socket exists once the application has started.
        Simulator::Schedule(Seconds(startList[i]) + NanoSeconds(1),
                            &ConnectSocketTraces,
                            i,
                            bulk);
        if (!cwndPrefix.empty())
        {
            std::ostringstream path;
            path << cwndPrefix << i << ".csv";
            g_flows[i].cwndOut = std::fopen(path.str().c_str(), "w");
        }
    }

    Simulator::Stop(Seconds(duration));
    auto wallStart = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();

    // Summary.
    std::vector<int64_t>& s = g_bn.sojournNs;
    double meanMs = 0;
    double p95Ms = 0;
    if (!s.empty())
    {
        long double sum = 0;
        for (int64_t v : s)
        {
            sum += v;
        }
        meanMs = static_cast<double>(sum / s.size()) / 1e6;
        // Nearest-rank p95, as an HDR histogram reports it.
        size_t k = static_cast<size_t>(std::ceil(0.95 * s.size())) - 1;
        std::nth_element(s.begin(), s.begin() + k, s.end());
        p95Ms = s[k] / 1e6;
    }
    const double capacityBytes = static_cast<double>(wireRate.GetBitRate()) / 8.0 * duration;
    std::ostringstream out;
    out.precision(10);
    out << "{\"simulator\":\"ns-3.37\",\"model_version\":" << kModelVersion << ",\"cca\":\"" << JsonEscape(cca) << "\",\"tcp_type\":\""
        << tcpType << "\",\"duration_s\":" << duration << ",\"seed\":" << seed
        << ",\"rate_bps\":" << bps << ",\"queue_packets\":" << queuePackets
        << ",\"loss\":" << loss << ",\"min_rto_ms\":" << minRtoMs << ",\"delack\":" << delAck
        << ",\"recovery\":\"" << recovery << "\",\"rto\":\"" << rto << "\",\"pacing\":" << (pace ? "true" : "false")
        << ",\"wall_s\":" << wall << ",\"flows\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const double active = duration - startList[i];
        // Bytes above a hole, held in the receive buffer, arrived too: count them as polycc does.
        uint64_t outOfOrder = 0;
        for (const Ptr<Socket>& sock : sinks[i]->GetAcceptedSockets())
        {
            Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(sock);
            if (tcp)
            {
                outOfOrder += tcp->GetRxBuffer()->Size() - tcp->GetRxBuffer()->Available();
            }
        }
        const uint64_t rx = sinks[i]->GetTotalRx() + outOfOrder;
        const FlowStats& f = g_flows[i];
        out << (i ? "," : "") << "{\"id\":" << i << ",\"rtt\":\""
            << rttList[rttList.size() == 1 ? 0 : i] << "\",\"goodput_mbps\":"
            << (active > 0 ? rx * 8.0 / active / 1e6 : 0.0) << ",\"bytes_delivered\":" << rx
            << ",\"out_of_order_bytes\":" << outOfOrder
            << ",\"retransmits\":" << f.retransmits
            << ",\"repeat_retransmits\":" << f.repeatRetransmits << ",\"rtos\":" << f.rtos
            << ",\"rto_expiries\":" << f.rtoExpiries
            << ",\"rto_lost_retransmissions\":" << f.rtoLostRetransmissions
            << ",\"recoveries\":" << f.recoveries << ",\"rtt_mean_ms\":"
            << (f.rttCount ? f.rttSumMs / f.rttCount : 0.0) << "}";
        if (f.cwndOut)
        {
            std::fclose(f.cwndOut);
        }
    }
    out << "],\"link\":{\"utilization\":" << g_bn.txBytes / capacityBytes
        << ",\"drops\":" << g_bn.drops << ",\"random_losses\":" << g_bn.randomLosses
        << ",\"queue_delay_ms\":{\"mean\":" << meanMs << ",\"p95\":" << p95Ms
        << "},\"dequeued_packets\":" << s.size() << "}}";
    std::cout << out.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
