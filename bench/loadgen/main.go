// Command loadgen is bench/capacity.py's open-loop paced sender in Go: the same commands on
// stdin and the same JSON figures on stdout as bench/capacity_load.py, for rates the Python
// sender cannot offer from the one core the senders share with the sink (it lags at about
// 260,000 spans/s over HTTP and 420,000 over gRPC, below parse-and-discard's limit).
//
//	loadgen --stream FILE   (FILE: bench/capacity.py writes the requests of one shard)
//
// A request leaves when the rate says, whether earlier ones were answered or not; its latency
// counts from when it was due. A refused one (HTTP 429/502/503/504, gRPC UNAVAILABLE or
// RESOURCE_EXHAUSTED) is sent again after the server's Retry-After or RetryInfo, and one not
// accepted within the deadline of being due counts as lost.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

const (
	exportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
	maxInFlight  = 256
)

type command struct {
	Rate     float64 `json:"rate"`
	Seconds  float64 `json:"seconds"`
	Deadline float64 `json:"deadline"`
	Protocol string  `json:"protocol"`
	Port     int     `json:"port"`
	Pass0    int     `json:"pass0"`
}

type outcome struct {
	kind   string // accepted, refused, failed
	reason string
	wait   float64
}

type sender interface {
	send(body []byte) outcome
	close()
}

// rawCodec passes prepared protobuf bytes through gRPC unchanged.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append((*(v.(*[]byte)))[:0], data...)
	return nil
}
func (rawCodec) Name() string { return "raw" }

var _ encoding.Codec = rawCodec{}

var digits = regexp.MustCompile(`\d+(\.\d+)?`)

// reasonOf leaves the numbers out of a refusal's message, so refusals group by cause.
func reasonOf(message string) string {
	r := digits.ReplaceAllString(message, "N")
	if len(r) > 160 {
		r = r[:160]
	}
	return r
}

type httpSender struct {
	client *http.Client
	url    string
}

func newHTTP(port int) *httpSender {
	transport := &http.Transport{
		MaxIdleConns:        maxInFlight,
		MaxIdleConnsPerHost: maxInFlight,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	return &httpSender{
		client: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		url:    fmt.Sprintf("http://127.0.0.1:%d/v1/traces", port),
	}
}

func (h *httpSender) send(body []byte) outcome {
	req, err := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return outcome{"failed", "request: " + err.Error(), 0}
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := h.client.Do(req)
	if err != nil {
		return outcome{"failed", "connection: " + reasonOf(err.Error()), 0}
	}
	payload, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return outcome{"accepted", "", 0}
	}
	message := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if resp.Header.Get("Content-Type") == "application/x-protobuf" {
		var st spb.Status
		if proto.Unmarshal(payload, &st) == nil {
			message += ": " + st.GetMessage()
		}
	}
	switch resp.StatusCode {
	case 429, 502, 503, 504:
		wait := 1.0
		if v, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil {
			wait = v
		}
		return outcome{"refused", reasonOf(message), wait}
	}
	return outcome{"failed", reasonOf(message), 0}
}

func (h *httpSender) close() { h.client.CloseIdleConnections() }

type grpcSender struct{ conn *grpc.ClientConn }

func newGRPC(port int) (*grpcSender, error) {
	conn, err := grpc.NewClient(
		fmt.Sprintf("127.0.0.1:%d", port),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallSendMsgSize(64<<20)),
	)
	if err != nil {
		return nil, err
	}
	return &grpcSender{conn}, nil
}

func (g *grpcSender) send(body []byte) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reply []byte
	err := g.conn.Invoke(ctx, exportMethod, &body, &reply)
	if err == nil {
		return outcome{"accepted", "", 0}
	}
	st := status.Convert(err)
	message := st.Code().String() + ": " + st.Message()
	if st.Code() == codes.Unavailable || st.Code() == codes.ResourceExhausted {
		wait := 1.0
		for _, detail := range st.Details() {
			if info, ok := detail.(*errdetails.RetryInfo); ok {
				wait = info.GetRetryDelay().AsDuration().Seconds()
			}
		}
		return outcome{"refused", reasonOf(message), wait}
	}
	return outcome{"failed", reasonOf(message), 0}
}

func (g *grpcSender) close() { g.conn.Close() }

// tag is the last 6 bytes of every trace id on pass n (bench/shapes.py's tag).
func tag(n int) []byte {
	t := []byte{0xfe, 0xed, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(t[2:], uint32(n))
	return t
}

// renew copies src into dst's storage with every `old` replaced by `new` (of the same length):
// bytes.ReplaceAll's result without a new allocation per request.
func renew(dst, src, old, new []byte) []byte {
	dst = append(dst[:0], src...)
	for off := 0; ; {
		i := bytes.Index(src[off:], old)
		if i < 0 {
			return dst
		}
		copy(dst[off+i:], new)
		off += i + len(old)
	}
}

func readStream(path string) ([][]byte, []int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var batches [][]byte
	var counts []int
	for len(data) >= 8 {
		spans := int(binary.LittleEndian.Uint32(data))
		size := int(binary.LittleEndian.Uint32(data[4:]))
		if len(data) < 8+size {
			return nil, nil, fmt.Errorf("%s: truncated", path)
		}
		batches = append(batches, data[8:8+size])
		counts = append(counts, spans)
		data = data[8+size:]
	}
	if len(batches) == 0 {
		return nil, nil, fmt.Errorf("%s: no requests", path)
	}
	return batches, counts, nil
}

func round5(x float64) float64 { return math.Round(x*1e5) / 1e5 }

func step(batches [][]byte, counts []int, cmd command) (map[string]any, error) {
	var s sender
	if cmd.Protocol == "http" {
		s = newHTTP(cmd.Port)
	} else {
		g, err := newGRPC(cmd.Port)
		if err != nil {
			return nil, err
		}
		s = g
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	perRequest := float64(total) / float64(len(counts))
	interval := perRequest / cmd.Rate
	nRequests := int(cmd.Seconds / interval)
	if nRequests < 1 {
		nRequests = 1
	}
	var (
		mu        sync.Mutex
		wg        sync.WaitGroup
		latencies []float64
		refusals  = map[string]int{}
		failures  = map[string]int{}
		accepted  int
		firstTry  int
		spans     int
	)
	// Each in-flight slot owns a body buffer that its requests reuse: a fresh copy per request
	// (bytes.ReplaceAll) allocated ~520 MB/s at 800,000 spans/s and its garbage collection
	// starved the pacing loop on the senders' shared core before the server's limit was reached.
	slots := make(chan []byte, maxInFlight)
	for n := 0; n < maxInFlight; n++ {
		slots <- nil
	}
	late := make([]float64, 0, nRequests)
	old := tag(0)
	start := time.Now().Add(20 * time.Millisecond)
	for index := 0; index < nRequests; index++ {
		due := start.Add(time.Duration(float64(index) * interval * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		late = append(late, time.Since(due).Seconds())
		nPass, i := index/len(batches)+cmd.Pass0, index%len(batches)
		wg.Add(1)
		go func(i, nPass int, due time.Time) {
			defer wg.Done()
			body := renew(<-slots, batches[i], old, tag(nPass))
			defer func() { slots <- body }()
			first := true
			for {
				out := s.send(body)
				now := time.Now()
				mu.Lock()
				switch out.kind {
				case "accepted":
					latencies = append(latencies, now.Sub(due).Seconds())
					accepted++
					if first {
						firstTry++
					}
					spans += counts[i]
					mu.Unlock()
					return
				case "failed":
					failures[out.reason]++
					mu.Unlock()
					return
				}
				refusals[out.reason]++
				first = false
				if now.Add(time.Duration(out.wait*float64(time.Second))).Sub(due).Seconds() > cmd.Deadline {
					failures["not accepted within the deadline"]++
					mu.Unlock()
					return
				}
				mu.Unlock()
				time.Sleep(time.Duration(out.wait * float64(time.Second)))
			}
		}(i, nPass, due)
	}
	sentBy := time.Since(start).Seconds()
	wg.Wait()
	s.close()
	offeredSpans := 0
	for i := 0; i < nRequests; i++ {
		offeredSpans += counts[i%len(batches)]
	}
	sort.Float64s(latencies)
	sort.Float64s(late)
	for i := range latencies {
		latencies[i] = round5(latencies[i])
	}
	for i := range late {
		late[i] = round5(late[i])
	}
	return map[string]any{
		"offered":       nRequests,
		"offered_spans": offeredSpans,
		"sending_s":     sentBy,
		"accepted":      accepted,
		"first_try":     firstTry,
		"spans":         spans,
		"refusals":      refusals,
		"failures":      failures,
		"latencies":     latencies,
		"late":          late,
		"next_pass":     cmd.Pass0 + nRequests/len(batches) + 1,
	}, nil
}

func main() {
	streamPath := flag.String("stream", "", "the requests of one shard (written by bench/capacity.py)")
	flag.Parse()
	batches, counts, err := readStream(*streamPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	_ = out.Encode(map[string]any{"ready": true, "batches": len(batches)})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var cmd command
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen: bad command:", err)
			os.Exit(2)
		}
		result, err := step(batches, counts, cmd)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
		_ = out.Encode(result)
	}
}
