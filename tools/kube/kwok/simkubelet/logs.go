package main

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	crilogs "k8s.io/cri-client/pkg/logs"
)

// logOptions reads the kubelet's containerLogs query (corev1.PodLogOptions as the API server
// encodes it) into the CRI log reader's options; a malformed value is an error naming it.
func logOptions(query url.Values, now time.Time) (*crilogs.LogOptions, error) {
	opts := &crilogs.LogOptions{}
	boolean := func(name string) (bool, error) {
		value := query.Get(name)
		if value == "" {
			return false, nil
		}
		parsed, err := strconv.ParseBool(value)
		if err != nil {
			return false, fmt.Errorf("%s=%q is not a boolean", name, value)
		}
		return parsed, nil
	}
	count := func(name string) (*int64, error) {
		value := query.Get(name)
		if value == "" {
			return nil, nil
		}
		parsed, err := strconv.ParseInt(value, 10, 64)
		if err != nil || parsed < 0 {
			return nil, fmt.Errorf("%s=%q is not a non-negative integer", name, value)
		}
		return &parsed, nil
	}
	var err error
	if opts.Follow, err = boolean("follow"); err != nil {
		return nil, err
	}
	if opts.Timestamp, err = boolean("timestamps"); err != nil {
		return nil, err
	}
	// "tail" is the kubelet's older spelling of tailLines; "all" means no limit.
	if tail := query.Get("tail"); tail != "" && tail != "all" && query.Get("tailLines") == "" {
		query = cloneWith(query, "tailLines", tail)
	}
	if opts.TailLines, err = count("tailLines"); err != nil {
		return nil, err
	}
	if opts.LimitBytes, err = count("limitBytes"); err != nil {
		return nil, err
	}
	seconds, err := count("sinceSeconds")
	if err != nil {
		return nil, err
	}
	if seconds != nil {
		opts.Since = now.Add(-time.Duration(*seconds) * time.Second)
	}
	if value := query.Get("sinceTime"); value != "" {
		since, err := time.Parse(time.RFC3339, value)
		if err != nil {
			return nil, fmt.Errorf("sinceTime=%q is not an RFC 3339 time", value)
		}
		if since.After(opts.Since) {
			opts.Since = since
		}
	}
	return opts, nil
}

func cloneWith(query url.Values, name, value string) url.Values {
	out := url.Values{}
	for key, values := range query {
		out[key] = append([]string(nil), values...)
	}
	out.Set(name, value)
	return out
}
