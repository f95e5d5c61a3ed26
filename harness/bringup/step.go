package bringup

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/clabrt"
	"github.com/fabricbench/fabricbench/containerlab/labrt"
	_ "github.com/fabricbench/fabricbench/containerlab/native" // the native runtime
	"github.com/fabricbench/fabricbench/results"
)

// StepOptions configure the bring-up step of a suite.
type StepOptions struct {
	Topology  string // containerlab topology file
	Deploy    bool   // bring the lab up first
	Runtime   string // auto (default), containerlab or native (clabrt.Choose)
	Teardown  bool   // Down removes the lab (only when deployed here)
	BGPWait   time.Duration
	Converge  time.Duration // see Options.Converge
	StateRoot string        // lab state (default labrt.DefaultStateRoot)
	Logf      func(format string, args ...any)
}

// Step is a suite's bring-up step: optionally deploy the lab, then
// validate it. The returned down function tears the lab down when the step
// deployed it and Teardown is set; it is never nil.
func Step(ctx context.Context, o StepOptions) (b *results.Bringup, down func(), err error) {
	down = func() {}
	top, err := containerlab.Parse(o.Topology)
	if err != nil {
		return nil, down, err
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	opts := labrt.Options{StateRoot: o.StateRoot, ReadyTimeout: 3 * time.Minute, Logf: logf}
	var lab *containerlab.Lab
	var st *labrt.State
	if o.Deploy {
		rtName, why, err := clabrt.Choose(o.Runtime)
		if err != nil {
			return nil, down, fmt.Errorf("bring-up: %w", err)
		}
		if why != "" {
			logf("bring-up: %s runtime (%s)", rtName, why)
		}
		if lab, err = top.Resolve(filepath.Dir(o.Topology), rtName); err != nil {
			return nil, down, err
		}
		rt, err := labrt.Open(rtName, opts)
		if err != nil {
			return nil, down, err
		}
		names := make([]string, len(lab.Nodes))
		for i, n := range lab.Nodes {
			names[i] = n.Name
		}
		if o.Teardown {
			down = func() { _, _ = rt.Destroy(context.Background(), lab.Name, names) }
		}
		if st, err = rt.Deploy(ctx, lab); err != nil {
			return nil, down, fmt.Errorf("bring-up: %w", err)
		}
		if !o.Teardown {
			// The lab outlives the run: it is the user's until lab down.
			if err := labrt.Keep(o.StateRoot, lab.Name); err != nil {
				return nil, down, fmt.Errorf("bring-up: %w", err)
			}
		}
	} else {
		if st, err = labrt.LoadState(o.StateRoot, top.Name); err != nil {
			return nil, down, fmt.Errorf("bring-up: lab %s is not deployed (%v); run fabricbench lab up %s or set bringup.deploy", top.Name, err, o.Topology)
		}
		rtName := st.Runtime
		if rtName == "" {
			rtName = containerlab.RuntimeNative
		}
		if lab, err = top.Resolve(filepath.Dir(o.Topology), rtName); err != nil {
			return nil, down, err
		}
	}
	t, err := FromLab(lab, st, o.Topology)
	if err != nil {
		return nil, down, err
	}
	if o.Deploy {
		if feats := LabFeatures(lab); len(feats) > 0 {
			if _, err := Apply(ctx, t, feats, nil, false); err != nil {
				return nil, down, fmt.Errorf("bring-up: configure lab %s: %w", lab.Name, err)
			}
		}
	}
	b, err = Validate(ctx, t, Options{BGPWait: o.BGPWait, Converge: o.Converge, Logf: o.Logf})
	return b, down, err
}
