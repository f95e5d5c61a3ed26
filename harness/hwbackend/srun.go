package hwbackend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fabricbench/fabricbench/agents/control"
	"github.com/fabricbench/fabricbench/agents/fleet"
	"github.com/fabricbench/fabricbench/agents/transport"
	"github.com/fabricbench/fabricbench/harness/hostdeploy"
)

// The srun launcher (agents: {launcher: srun}) starts one agent per host
// as a job step of the Slurm allocation the run is in ($SLURM_JOB_ID, as
// inside sbatch or salloc): `srun --jobid J --nodelist NODE --nodes 1
// --ntasks 1 --overlap BINARY agent --config FILE`, where NODE is the
// host's devices[].slurm_node or its name. The node must be one of the
// allocation's ($SLURM_JOB_NODELIST). The binary (--agent-binary or this
// fabricbench) and the run's directory, which holds each agent's
// configuration and token (0600), must be on a filesystem the nodes share,
// as usual on a cluster. The control API, the flows and the results are
// those of SSH deployment. Down ends each step (SIGTERM to its srun, which
// forwards it; SIGKILL after 5 s) and keeps its output as the agent's log.
type srunLauncher struct {
	logf func(string, ...any)
	dir  string
	bin  string

	mu    sync.Mutex
	steps []*srunStep
}

type srunStep struct {
	host string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// slurmAllocation returns the job ID and node names of the allocation
// the run is in.
func slurmAllocation(ctx context.Context) (string, []string, error) {
	job := os.Getenv("SLURM_JOB_ID")
	if job == "" {
		return "", nil, errors.New("agents.launcher srun needs a Slurm allocation: run fabricbench inside sbatch or salloc (SLURM_JOB_ID is not set)")
	}
	list := os.Getenv("SLURM_JOB_NODELIST")
	if list == "" {
		out, err := exec.CommandContext(ctx, "squeue", "-h", "-j", job, "-o", "%N").Output()
		if err != nil {
			return "", nil, fmt.Errorf("squeue -j %s: %w", job, err)
		}
		list = strings.TrimSpace(string(out))
	}
	out, err := exec.CommandContext(ctx, "scontrol", "show", "hostnames", list).Output()
	if err != nil {
		return "", nil, fmt.Errorf("scontrol show hostnames %s: %w", list, err)
	}
	return job, strings.Fields(string(out)), nil
}

func (l *srunLauncher) start(ctx context.Context, agents []hostdeploy.Agent, nodes []string, p transport.Params, entropyPorts int, runID uint32, token string) ([]fleet.Host, error) {
	job, alloc, err := slurmAllocation(ctx)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, n := range alloc {
		have[n] = true
	}
	for i, a := range agents {
		if !have[nodes[i]] {
			return nil, fmt.Errorf("host %s: Slurm node %s is not in allocation %s (%s)", a.Node, nodes[i], job, strings.Join(alloc, ","))
		}
	}
	bin := l.bin
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	dir := filepath.Join(l.dir, "agents")
	if l.dir == "" {
		if dir, err = os.MkdirTemp("", "fabricbench-srun-"); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tokFile := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tokFile, []byte(token), 0o600); err != nil {
		return nil, err
	}
	out := make([]fleet.Host, len(agents))
	err = hostdeploy.Parallel(len(agents), func(i int) error {
		a := agents[i]
		js, err := hostdeploy.AgentConfig(a, p, entropyPorts, runID, tokFile)
		if err != nil {
			return err
		}
		conf := filepath.Join(dir, a.Node+".json")
		if err := os.WriteFile(conf, js, 0o600); err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(dir, a.Node+".log"))
		if err != nil {
			return err
		}
		args := []string{"--jobid", job, "--nodelist", nodes[i], "--nodes", "1", "--ntasks", "1", "--overlap",
			"--job-name", "fabricbench-agent-" + a.Node, bin, "agent", "--config", conf}
		cmd := exec.Command("srun", args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return fmt.Errorf("srun on %s: %w", nodes[i], err)
		}
		st := &srunStep{host: a.Node, cmd: cmd, log: logf, done: make(chan struct{})}
		go func() { st.err = cmd.Wait(); close(st.done) }()
		l.mu.Lock()
		l.steps = append(l.steps, st)
		l.mu.Unlock()
		l.logf("srun: agent for %s on node %s (job %s)", a.Node, nodes[i], job)
		c := control.NewClient(a.Control, token)
		alive := func() (bool, string) {
			select {
			case <-st.done:
				b, _ := os.ReadFile(logf.Name())
				return false, fmt.Sprintf("srun ended (%v): %s", st.err, lastLines(string(b), 10))
			default:
				return true, ""
			}
		}
		if err := hostdeploy.WaitHealthy(ctx, c, alive); err != nil {
			return fmt.Errorf("agent on %s (srun on %s): %w", a.Node, nodes[i], err)
		}
		out[i] = fleet.Host{Name: a.Node, Agent: c}
		return nil
	})
	return out, err
}

// stop ends every step: SIGTERM to srun (forwarded to the agent), SIGKILL
// to the srun process group after 5 s.
func (l *srunLauncher) stop(ctx context.Context) error {
	l.mu.Lock()
	steps := l.steps
	l.steps = nil
	l.mu.Unlock()
	var errs []error
	for _, s := range steps {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, s := range steps {
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
			errs = append(errs, fmt.Errorf("srun step of the agent on %s did not end on SIGTERM; killed", s.host))
		case <-ctx.Done():
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
		s.log.Close()
	}
	return errors.Join(errs...)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
