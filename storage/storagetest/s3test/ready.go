package s3test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// loopback is the only address the node binds.
const loopback = "127.0.0.1"

// ports are the node's listeners, each picked free on loopback.
type ports struct {
	master, masterGRPC int
	volume, volumeGRPC int
	filer, filerGRPC   int
	s3, s3GRPC         int
}

// freePorts returns eight loopback ports that were free just now, distinct
// because they are held open together while picked.
func freePorts() (ports, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var nums []int
	for range 8 {
		l, err := net.Listen("tcp", loopback+":0")
		if err != nil {
			return ports{}, err
		}
		ls = append(ls, l)
		nums = append(nums, l.Addr().(*net.TCPAddr).Port)
	}
	return ports{nums[0], nums[1], nums[2], nums[3], nums[4], nums[5], nums[6], nums[7]}, nil
}

// waitReady polls until the S3 gateway's and the filer's health URLs answer
// 200 and the master lists the volume server, or the node exits, or timeout
// passes.
func (s *Server) waitReady(timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exit:
			return fmt.Errorf("s3test: SeaweedFS exited during start-up (%v):\n%s", s.cmd.ProcessState, s.logTail())
		default:
		}
		if s.ready(client) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("s3test: SeaweedFS not ready after %v:\n%s", timeout, s.logTail())
}

func (s *Server) ready(client *http.Client) bool {
	url := func(port int, path string) string {
		return "http://" + net.JoinHostPort(loopback, strconv.Itoa(port)) + path
	}
	volume := net.JoinHostPort(loopback, strconv.Itoa(s.ports.volume))
	return answers(client, url(s.ports.s3, "/healthz"), "") &&
		answers(client, url(s.ports.filer, "/healthz"), "") &&
		answers(client, url(s.ports.master, "/dir/status"), `"`+volume+`"`)
}

// answers reports whether a GET of url is a 200 whose body holds want.
func answers(client *http.Client, url, want string) bool {
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(body), want)
}
