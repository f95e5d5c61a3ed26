package telemetry

import (
	"context"
	"errors"
)

// Sink receives telemetry samples.
//
// Write is called from a single goroutine. It must not retain batch (nor the
// slice's backing array) after it returns; implementations copy what they
// need. Close flushes whatever the sink still buffers and releases its
// resources; ctx bounds how long that may take. Write must not be called
// after Close.
type Sink interface {
	Write(batch []Sample) error
	Close(ctx context.Context) error
}

// Multi returns a Sink that writes every batch to each of sinks in order.
// nil sinks are ignored. Write calls every sink even if an earlier one fails
// and returns the errors joined (errors.Join); Close closes every sink and
// joins their errors the same way.
func Multi(sinks ...Sink) Sink {
	m := make(multiSink, 0, len(sinks))
	for _, s := range sinks {
		if s != nil {
			m = append(m, s)
		}
	}
	if len(m) == 1 {
		return m[0]
	}
	return m
}

type multiSink []Sink

func (m multiSink) Write(batch []Sample) error {
	var errs []error
	for _, s := range m {
		if err := s.Write(batch); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m multiSink) Close(ctx context.Context) error {
	var errs []error
	for _, s := range m {
		if err := s.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
