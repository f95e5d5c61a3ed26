package kernelexp

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ticker wakes the sampling loop at multiples of its alignment plus
// multiples of its period, by the wall clock. It is a CLOCK_REALTIME
// timerfd read through the runtime's poller: Go's own timers sleep in
// whole milliseconds on Linux (epoll_pwait), which made a 1 ms tick start
// anywhere in the following millisecond; a timerfd wakes within tens of
// microseconds and also counts the expirations that were not read.
type ticker struct {
	f             *os.File
	fd            int
	period, align int64
	buf           [8]byte
}

func newTicker(period, align time.Duration) (*ticker, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_REALTIME, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	t := &ticker{fd: fd, period: int64(period), align: int64(align)}
	if err := t.arm(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// A non-blocking descriptor: os.NewFile registers it with the poller,
	// so Read parks the goroutine and read deadlines work.
	t.f = os.NewFile(uintptr(fd), "timerfd")
	return t, nil
}

// arm starts the timer at the next multiple of align. The timer is
// cancelled (wait returns ECANCELED) if the clock is set discontinuously.
func (t *ticker) arm() error {
	now := time.Now().UnixNano()
	first := (now/t.align + 1) * t.align
	its := unix.ItimerSpec{Interval: unix.NsecToTimespec(t.period), Value: unix.NsecToTimespec(first)}
	if err := unix.TimerfdSettime(t.fd, unix.TFD_TIMER_ABSTIME|unix.TFD_TIMER_CANCEL_ON_SET, &its, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	return nil
}

// wait blocks until the timer has expired at least once since the last
// wait, or until stop.
func (t *ticker) wait() error {
	_, err := t.f.Read(t.buf[:])
	return err
}

// stop makes the current and every later wait return an error at once.
// It may be called from any goroutine.
func (t *ticker) stop() { _ = t.f.SetReadDeadline(time.Unix(1, 0)) }

func (t *ticker) close() { t.f.Close() }
