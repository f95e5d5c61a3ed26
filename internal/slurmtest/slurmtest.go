// Package slurmtest runs a real one-node Slurm cluster (Debian's
// slurm-wlm 22.05 and munge) on loopback for tests.
//
// Start writes its own munge key, slurm.conf, state and spool directories
// under t.TempDir(), picks free ports, starts munged (as user munge),
// slurmctld -i and slurmd in the foreground, waits until the node is idle
// and sets SLURM_CONF for the test, so sbatch, squeue, scancel and
// programs that run them use this cluster. t.Cleanup cancels the jobs and
// stops the daemons by PID (their process groups), also when the test
// fails, and then logs the ends of their logs if it failed.
//
// Without root, the binaries or the munge user, Start skips the test and
// says what is missing (scripts/test.sh installs the packages).
package slurmtest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	readyTimeout = 60 * time.Second
	logTailLines = 30
)

// Binaries the cluster needs (Debian packages munge, slurmctld, slurmd,
// slurm-client).
var Binaries = []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "scontrol"}

// Cluster is a running one-node cluster.
type Cluster struct {
	// Dir holds slurm.conf, the munge key and socket, state, spool and
	// logs.
	Dir string
	// Conf is the slurm.conf path (SLURM_CONF).
	Conf string
	// Node is the node's name (hostname -s), in partition "debug".
	Node  string
	procs []*exec.Cmd
	logs  []string
}

// Available says why a cluster cannot be started here, or nil.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("the Slurm test cluster needs root (munged runs as user munge, slurmd as root)")
	}
	var missing []string
	for _, b := range Binaries {
		if _, err := lookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the Slurm test cluster needs %s (not installed; apt-get install slurm-wlm munge; scripts/test.sh does)", strings.Join(missing, ", "))
	}
	if _, err := user.Lookup("munge"); err != nil {
		return fmt.Errorf("the Slurm test cluster needs the user munge, which the munge package creates: %v", err)
	}
	return nil
}

// lookPath finds b in PATH or the sbin directories (not in a non-root
// PATH).
func lookPath(b string) (string, error) {
	if p, err := exec.LookPath(b); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, b)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", b)
}

// Start starts the cluster, or skips the test saying why it cannot.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	// munged checks that every directory above its socket lets others
	// through; the test's temp directories are 0700.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), Node: host}
	t.Cleanup(func() { c.stop(t) })

	if err := c.startMunge(); err != nil {
		t.Fatalf("munged: %v\n%s", err, c.tails())
	}
	ctldPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	dPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.writeConf(ctldPort, dPort); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", c.Conf)
	for _, d := range []string{"slurmctld", "slurmd"} {
		args := []string{"-D", "-f", c.Conf}
		if d == "slurmctld" {
			args = append(args, "-i")
		}
		if err := c.start(d, filepath.Join(dir, d+".out"), nil, args...); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	c.logs = append(c.logs, filepath.Join(dir, "slurmctld.log"), filepath.Join(dir, "slurmd.log"))
	deadline := time.Now().Add(readyTimeout)
	for {
		out, err := exec.Command("sinfo", "-h", "-n", c.Node, "-o", "%T").CombinedOutput()
		state := strings.TrimSpace(string(out))
		if err == nil && state == "idle" {
			break
		}
		for _, p := range c.procs {
			if p.ProcessState != nil {
				t.Fatalf("%s exited: %v\n%s", p.Path, p.ProcessState, c.tails())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Slurm node %s not idle after %v (sinfo: %q, %v)\n%s", c.Node, readyTimeout, state, err, c.tails())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return c
}

func (c *Cluster) startMunge() error {
	u, err := user.Lookup("munge")
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	md := filepath.Join(c.Dir, "munge")
	if err := os.Mkdir(md, 0o711); err != nil {
		return err
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	keyPath := filepath.Join(md, "munge.key")
	if err := os.WriteFile(keyPath, key, 0o400); err != nil {
		return err
	}
	for _, p := range []string{md, keyPath} {
		if err := os.Chown(p, uid, gid); err != nil {
			return err
		}
	}
	sock := filepath.Join(md, "munge.sock")
	log := filepath.Join(md, "munged.log")
	c.logs = append(c.logs, log)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if err := c.start("munged", filepath.Join(c.Dir, "munged.out"), cred, "-F", "--socket="+sock, "--key-file="+keyPath,
		"--pid-file="+filepath.Join(md, "munged.pid"), "--log-file="+log, "--seed-file="+filepath.Join(md, "munged.seed")); err != nil {
		return err
	}
	c.logs = append(c.logs, filepath.Join(c.Dir, "munged.out"))
	for range 100 {
		if _, err := os.Stat(sock); err == nil {
			return nil
		}
		if p := c.procs[len(c.procs)-1]; p.ProcessState != nil {
			return fmt.Errorf("exited: %v", p.ProcessState)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("no socket after 5 s")
}

func (c *Cluster) writeConf(ctldPort, dPort int) error {
	d := c.Dir
	for _, s := range []string{"state", "spool"} {
		if err := os.Mkdir(filepath.Join(d, s), 0o755); err != nil {
			return err
		}
	}
	conf := fmt.Sprintf(`# slurmtest: a one-node cluster on loopback
ClusterName=fbtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[4]s/munge/munge.sock
CredType=cred/munge
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd.pid
SlurmctldLogFile=%[4]s/slurmctld.log
SlurmdLogFile=%[4]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=%[4]s/jobcomp.txt
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[5]d State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, c.Node, ctldPort, dPort, d, runtime.NumCPU())
	return os.WriteFile(c.Conf, []byte(conf), 0o644)
}

func (c *Cluster) start(name, out string, cred *syscall.Credential, args ...string) error {
	path, err := lookPath(name)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if cred != nil {
		_ = os.Chown(out, int(cred.Uid), int(cred.Gid))
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		return err
	}
	c.procs = append(c.procs, cmd)
	go func() { _ = cmd.Wait() }()
	return nil
}

// stop cancels every job, then stops the daemons (slurmd, slurmctld,
// munged) by their process groups: SIGTERM, SIGKILL after 5 s.
func (c *Cluster) stop(t testing.TB) {
	if len(c.procs) > 1 {
		_ = exec.Command("scancel", "--full", "-u", "root").Run()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			out, err := exec.Command("squeue", "-h").Output()
			if err != nil || len(bytes.TrimSpace(out)) == 0 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		stopped := false
		for range 50 {
			if syscall.Kill(p.Process.Pid, 0) != nil {
				stopped = true
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !stopped {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		}
	}
	// A job step still running when the daemons stopped (slurmstepd and
	// the job's processes, which carry this cluster's SLURM_CONF) goes
	// too.
	for _, pid := range c.leftovers() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Logf("slurmtest: killed leftover process %d of the cluster", pid)
	}
	if t.Failed() {
		t.Logf("Slurm test cluster in %s:\n%s", c.Dir, c.tails())
	}
}

// leftovers are the processes whose environment holds this cluster's
// SLURM_CONF, but for this one.
func (c *Cluster) leftovers() []int {
	want := []byte("SLURM_CONF=" + c.Conf + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append(env, 0), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// tails is the end of each daemon log.
func (c *Cluster) tails() string {
	var b strings.Builder
	for _, l := range c.logs {
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > logTailLines {
			lines = lines[len(lines)-logTailLines:]
		}
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", l, len(lines), strings.Join(lines, "\n"))
	}
	return b.String()
}

// freePort is a free TCP port (Slurm's daemons bind 0.0.0.0).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
