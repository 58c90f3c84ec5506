package devstack

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
//
// It listens on 127.0.0.1:0, reads the port the kernel chose and closes the
// listener again, so another process may take the port before the caller binds
// it; callers that start several listeners should pick all ports first (see
// freePorts). The error is the one from net.Listen.
func FreePort() (int, error) {
	ports, err := freePorts("127.0.0.1", 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// freePorts returns n distinct free TCP ports on ip. All n listeners are held
// open until every port is chosen, so the kernel cannot hand out the same
// port twice; they are closed before returning.
func freePorts(ip string, n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, fmt.Errorf("devstack: pick free port on %s: %w", ip, err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// checkPortsFree returns an error naming the first of ports that cannot be
// bound on ip right now. Used before handing ports to libraries that exit or
// panic on a bind failure instead of returning an error.
func checkPortsFree(ip string, ports ...int) error {
	var errs []error
	for _, p := range ports {
		if p <= 0 {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p)))
		if err != nil {
			errs = append(errs, fmt.Errorf("devstack: port %d on %s is not free: %w", p, ip, err))
			continue
		}
		_ = ln.Close()
	}
	return errors.Join(errs...)
}
