// Package slurm runs the points of a suite's matrix as a Slurm job array:
// one array task per point (`fabricbench run SUITE --point K`), then a
// job that depends on the array (afterany) and merges the points
// (`fabricbench merge DIR`) into the results.json, junit.xml and
// report.html a local run writes.
//
// The submission leaves in the results directory:
//
//	plan.json                 the suite's points in matrix order
//	slurm/array.sbatch        the batch script of the array
//	slurm/job.json            the array and merge job IDs (Job)
//	slurm/logs/A_K.out        the log of array task K of job A
//	slurm/logs/merge_J.out    the merge job's log
//
// The results directory, the suite and the fabricbench binary must be on
// a file system the compute nodes share (the same paths).
package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fabricbench/fabricbench/harness"
	"github.com/fabricbench/fabricbench/harness/runspec"
	"github.com/fabricbench/fabricbench/results"
)

// JobFile is slurm/job.json in the results directory.
const JobFile = "slurm/job.json"

// Options describe a submission.
type Options struct {
	// SuiteFile and Out are as given on the command line; the jobs run in
	// Workdir (default: the current directory), so relative paths work
	// there and results.json records the suite file as a local run does.
	SuiteFile, Out, Workdir string
	// Binary is the fabricbench executable the tasks run (default: this
	// program).
	Binary  string
	Backend string
	// Partition, Account and Time (sbatch --time, e.g. 30:00) apply to
	// the array and the merge job; empty: the cluster's defaults.
	Partition, Account, Time string
	// ArrayLimit bounds the tasks running at once (sbatch --array=...%N);
	// 0: no bound.
	ArrayLimit int
	// Plan is the planned suite (harness.PlanPoints).
	Plan *harness.PlanRecord
}

// Job is slurm/job.json: what was submitted.
type Job struct {
	ArrayJob string    `json:"array_job"`
	MergeJob string    `json:"merge_job"`
	Points   int       `json:"points"`
	Workdir  string    `json:"workdir"`
	LogDir   string    `json:"log_dir"` // absolute
	Out      string    `json:"out"`     // as given
	Binary   string    `json:"binary"`
	Cluster  string    `json:"cluster,omitempty"`
	Time     time.Time `json:"submitted"`
}

// TaskLog is the log file of array task k.
func (j *Job) TaskLog(k int) string {
	return filepath.Join(j.LogDir, j.ArrayJob+"_"+strconv.Itoa(k)+".out")
}

func (o *Options) fill() error {
	if o.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		o.Workdir = wd
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Binary = exe
	}
	if o.Backend == "" {
		o.Backend = "sim"
	}
	if o.ArrayLimit < 0 {
		return &harness.InputError{Err: fmt.Errorf("--array-limit: %d is not a number of tasks (want 1 or more, 0 for no limit)", o.ArrayLimit)}
	}
	if o.Plan == nil || len(o.Plan.Points) == 0 {
		return &harness.InputError{Err: errors.New("the suite has no points")}
	}
	return nil
}

func (o *Options) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(o.Workdir, p)
}

// quote quotes s for the shell (single quotes).
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// directives are the #SBATCH lines both jobs share.
func (o *Options) common() []string {
	var d []string
	d = append(d, "--chdir="+o.Workdir)
	if o.Partition != "" {
		d = append(d, "--partition="+o.Partition)
	}
	if o.Account != "" {
		d = append(d, "--account="+o.Account)
	}
	if o.Time != "" {
		d = append(d, "--time="+o.Time)
	}
	return d
}

// mergeCommand is the merge job's command line.
func (o *Options) mergeCommand() string {
	return "exec " + quote(o.Binary) + " merge " + quote(o.Out)
}

// Script is the batch script of the job array: task K runs point K.
func Script(o Options) (string, error) {
	if err := o.fill(); err != nil {
		return "", err
	}
	n := len(o.Plan.Points)
	logDir := o.abs(filepath.Join(o.Out, "slurm", "logs"))
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", jobName(o.Plan.Suite))
	arr := fmt.Sprintf("0-%d", n-1)
	if o.ArrayLimit > 0 {
		arr += "%" + strconv.Itoa(o.ArrayLimit)
	}
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", arr)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logDir, "%A_%a.out"))
	b.WriteString("#SBATCH --ntasks=1\n")
	for _, d := range o.common() {
		fmt.Fprintf(&b, "#SBATCH %s\n", d)
	}
	fmt.Fprintf(&b, "#\n# fabricbench suite %s: %s, one array task each, in matrix order:\n", o.Plan.Suite, runspec.Plural(n, "point", "points"))
	for i, p := range o.Plan.Points {
		fmt.Fprintf(&b, "#   %d  %s\n", i, p.ID)
	}
	fmt.Fprintf(&b, "# A job depending on this one (afterany) merges the points:\n#   sbatch --dependency=afterany:$ARRAY_JOB_ID --output=%s --wrap=%s\n",
		filepath.Join(logDir, "merge_%j.out"), quote(o.mergeCommand()))
	// exec: scancel's SIGTERM reaches fabricbench, which saves what the
	// run has (merge marks it as stopped by Slurm).
	fmt.Fprintf(&b, "exec %s run %s --point \"$SLURM_ARRAY_TASK_ID\" --out %s --backend %s --quiet\n",
		quote(o.Binary), quote(o.SuiteFile), quote(o.Out), quote(o.Backend))
	return b.String(), nil
}

func jobName(suite string) string {
	var b strings.Builder
	for _, r := range "fabricbench-" + suite {
		if r == '-' || r == '_' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Submit writes plan.json and the batch script into the results
// directory, clears the results of an earlier run there, and submits the
// array and the merge job.
func Submit(ctx context.Context, o Options) (*Job, error) {
	script, err := Script(o)
	if err != nil {
		return nil, err
	}
	_ = o.fill()
	out := o.abs(o.Out)
	logDir := filepath.Join(out, "slurm", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, &harness.InfraError{Err: fmt.Errorf("results directory: %w", err)}
	}
	// A merge must not pick up points or results of an earlier run.
	for _, p := range o.Plan.Points {
		if err := os.RemoveAll(filepath.Join(out, "runs", p.ID)); err != nil {
			return nil, &harness.InfraError{Err: err}
		}
	}
	for _, f := range []string{results.FileName, "junit.xml", "report.html"} {
		_ = os.Remove(filepath.Join(out, f))
	}
	if err := harness.WritePlan(out, o.Plan); err != nil {
		return nil, &harness.InfraError{Err: fmt.Errorf("results directory: %w", err)}
	}
	scriptPath := filepath.Join(out, "slurm", "array.sbatch")
	if err := os.WriteFile(scriptPath, []byte(script), 0o755); err != nil {
		return nil, &harness.InfraError{Err: fmt.Errorf("results directory: %w", err)}
	}
	arrayJob, err := sbatch(ctx, "--parsable", scriptPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--parsable", "--job-name=" + jobName(o.Plan.Suite) + "-merge", "--dependency=afterany:" + arrayJob,
		"--ntasks=1", "--output=" + filepath.Join(logDir, "merge_%j.out")}
	args = append(args, o.common()...)
	args = append(args, "--wrap="+o.mergeCommand())
	mergeJob, err := sbatch(ctx, args...)
	if err != nil {
		_ = exec.Command("scancel", arrayJob).Run()
		return nil, fmt.Errorf("%w (array job %s cancelled)", err, arrayJob)
	}
	j := &Job{ArrayJob: arrayJob, MergeJob: mergeJob, Points: len(o.Plan.Points), Workdir: o.Workdir, LogDir: logDir,
		Out: o.Out, Binary: o.Binary, Time: time.Now().UTC()}
	if id, cluster, ok := strings.Cut(arrayJob, ";"); ok { // --parsable on a multi-cluster: "id;cluster"
		j.ArrayJob, j.Cluster = id, cluster
	}
	if c, _, ok := strings.Cut(mergeJob, ";"); ok {
		j.MergeJob = c
	}
	data, _ := json.MarshalIndent(j, "", "  ")
	if err := results.WriteFileAtomic(filepath.Join(out, filepath.FromSlash(JobFile)), append(data, '\n')); err != nil {
		return j, &harness.InfraError{Err: fmt.Errorf("results directory: %w", err)}
	}
	return j, nil
}

// sbatch runs sbatch and returns its trimmed output (--parsable: the job
// ID). A refusal is an infrastructure error with sbatch's message.
func sbatch(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "sbatch", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", &harness.InfraError{Err: fmt.Errorf("sbatch: %s", msg)}
	}
	return strings.TrimSpace(stdout.String()), nil
}

// LoadJob reads DIR/slurm/job.json; os.ErrNotExist when the points were
// not submitted to Slurm.
func LoadJob(dir string) (*Job, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(JobFile)))
	if err != nil {
		return nil, err
	}
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, JobFile), err)
	}
	return &j, nil
}

// States returns the Slurm state of every array task of j, by index, from
// sacct (clusters with accounting) or else from scontrol (the controller
// keeps finished jobs for MinJobAge, 300 s by default). Tasks it cannot
// find are left out.
func States(ctx context.Context, j *Job) map[int]string {
	st := map[int]string{}
	out, err := exec.CommandContext(ctx, "sacct", "-X", "-n", "-P", "-j", j.ArrayJob, "-o", "JobID,State").Output()
	if err == nil {
		for line := range strings.SplitSeq(string(out), "\n") {
			id, state, ok := strings.Cut(strings.TrimSpace(line), "|")
			if !ok {
				continue
			}
			_, idx, ok := strings.Cut(id, "_")
			if k, err := strconv.Atoi(idx); ok && err == nil {
				st[k] = firstWord(state)
			}
		}
	}
	if len(st) == j.Points {
		return st
	}
	out, err = exec.CommandContext(ctx, "scontrol", "show", "job", "-o", j.ArrayJob).Output()
	if err != nil {
		return st
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := fields(line)
		if f["ArrayJobId"] != j.ArrayJob {
			continue
		}
		if k, err := strconv.Atoi(f["ArrayTaskId"]); err == nil {
			if _, ok := st[k]; !ok {
				st[k] = f["JobState"]
			}
		}
	}
	return st
}

// firstWord: sacct says "CANCELLED by 0".
func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// fields splits scontrol's one-line "Key=Value Key=Value" output.
func fields(line string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(line) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// TaskInfo describes the array tasks for harness.Merge: the Slurm state,
// the log and its last line.
func TaskInfo(ctx context.Context, j *Job) func(int) *harness.TaskInfo {
	states := States(ctx, j)
	return func(k int) *harness.TaskInfo {
		state := states[k]
		desc := fmt.Sprintf("Slurm task %s_%d", j.ArrayJob, k)
		if state != "" {
			desc += " " + state
		} else {
			desc += " (state unknown to sacct and scontrol)"
		}
		log := j.TaskLog(k)
		if last := lastLine(log); last != "" {
			desc += ", log " + log + ": " + last
		} else if _, err := os.Stat(log); err == nil {
			desc += ", log " + log + " (empty)"
		} else {
			desc += ", no log (" + log + "): the task did not start"
		}
		return &harness.TaskInfo{State: state, Desc: desc}
	}
}

// lastLine is the last non-empty line of a file (at most its last 4 KiB).
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 4096 {
		_, _ = f.Seek(-4096, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Wait follows the array and the merge job until the merge job has left
// the queue, printing a progress line to w when the counts change (tasks
// by state, points saved). The results directory then holds the merged
// results (read them with results.Load).
func Wait(ctx context.Context, j *Job, dir string, w io.Writer, poll time.Duration) error {
	if poll <= 0 {
		poll = 5 * time.Second
	}
	last := ""
	for {
		out, err := exec.CommandContext(ctx, "squeue", "-h", "-j", j.ArrayJob+","+j.MergeJob, "-o", "%i|%T").Output()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// squeue fails for job IDs the controller no longer knows:
			// both jobs are done.
			out = nil
		}
		counts := map[string]int{}
		mergeState := ""
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			id, state, ok := strings.Cut(line, "|")
			if !ok {
				continue
			}
			if id == j.MergeJob {
				mergeState = state
				continue
			}
			n := 1
			// A pending array is one line: "12_[3-7%2]".
			if _, r, ok := strings.Cut(id, "_["); ok {
				n = rangeCount(strings.TrimSuffix(r, "]"))
			}
			counts[state] += n
		}
		saved := 0
		for _, p := range plannedIDs(dir) {
			if _, err := os.Stat(filepath.Join(dir, "runs", p, harness.PointFile)); err == nil {
				saved++
			}
		}
		line := fmt.Sprintf("slurm: array %s: %d/%d points saved", j.ArrayJob, saved, j.Points)
		for _, s := range []string{"PENDING", "RUNNING", "COMPLETING"} {
			if counts[s] > 0 {
				line += fmt.Sprintf(", %d %s", counts[s], strings.ToLower(s))
			}
		}
		if mergeState != "" {
			line += "; merge job " + j.MergeJob + " " + strings.ToLower(mergeState)
		}
		if line != last {
			fmt.Fprintln(w, line)
			last = line
		}
		if mergeState == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// rangeCount counts the indices of "3-7%2" or "1,4-5".
func rangeCount(s string) int {
	s, _, _ = strings.Cut(s, "%")
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		a, b, ok := strings.Cut(part, "-")
		x, err1 := strconv.Atoi(a)
		if !ok {
			if err1 == nil {
				n++
			}
			continue
		}
		if y, err2 := strconv.Atoi(b); err1 == nil && err2 == nil && y >= x {
			n += y - x + 1
		}
	}
	return n
}

func plannedIDs(dir string) []string {
	pr, err := harness.LoadPlan(dir)
	if err != nil {
		return nil
	}
	var ids []string
	for _, p := range pr.Points {
		ids = append(ids, p.ID)
	}
	return ids
}
