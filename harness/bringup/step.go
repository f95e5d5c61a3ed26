package bringup

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fabricbench/fabricbench/containerlab"
	"github.com/fabricbench/fabricbench/containerlab/native"
	"github.com/fabricbench/fabricbench/results"
)

// StepOptions configure the bring-up step of a suite.
type StepOptions struct {
	Topology  string // containerlab topology file
	Deploy    bool   // bring the lab up first (native runtime)
	Teardown  bool   // Down removes the lab (only when deployed here)
	BGPWait   time.Duration
	StateRoot string // native lab state (default native.DefaultStateRoot)
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
	lab, err := top.Lab(filepath.Dir(o.Topology))
	if err != nil {
		return nil, down, err
	}
	opts := []native.Option{native.WithStateRoot(orDefault(o.StateRoot, native.DefaultStateRoot))}
	if o.Logf != nil {
		opts = append(opts, native.WithLogf(o.Logf))
	}
	d := native.New(opts...)
	var st *native.State
	if o.Deploy {
		names := make([]string, len(lab.Nodes))
		for i, n := range lab.Nodes {
			names[i] = n.Name
		}
		if o.Teardown {
			down = func() { _, _ = d.Destroy(context.Background(), lab.Name, names) }
		}
		if st, err = d.Deploy(ctx, lab); err != nil {
			return nil, down, fmt.Errorf("bring-up: %w", err)
		}
	} else if st, err = d.LoadState(lab.Name); err != nil {
		return nil, down, fmt.Errorf("bring-up: lab %s is not deployed (%v); run fabricbench lab up %s or set bringup.deploy", lab.Name, err, o.Topology)
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
	b, err = Validate(ctx, t, Options{BGPWait: o.BGPWait})
	return b, down, err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
