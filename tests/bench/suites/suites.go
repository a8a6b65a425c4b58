package suites

import "github.com/sluicehq/sluice/tests/bench/harness"

// All returns every suite, in the order --help lists them.
func All() []harness.Suite {
	return []harness.Suite{
		Foundation(),
		SQL(),
		Cluster(),
		Serve(),
		Schedules(),
		SchedulesScale(),
		Shards(),
		History(),
		Lists(),
		Objects(),
		Kafka(),
	}
}

// Registry is the checked registry of All.
func Registry() (*harness.Registry, error) {
	return harness.NewRegistry(All()...)
}
