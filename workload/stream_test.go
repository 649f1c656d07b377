package workload

import (
	"reflect"
	"testing"
)

// TestOpenStreamIsTheList: an open loop streamed gives the requests Spec.Requests lists (same
// arrivals, lengths and content ids), for a Poisson count, a gamma duration with shared prefixes
// and a ramp.
func TestOpenStreamIsTheList(t *testing.T) {
	for _, text := range []string{
		"name = \"p\"\nkind = \"open\"\n[open]\nprocess = \"poisson\"\nrate = 5\nrequests = 500\n[lengths]\ninput_tokens = 300\noutput_tokens = 40\nrange_ratio = 0.5\n",
		"name = \"g\"\nkind = \"open\"\n[open]\nprocess = \"gamma\"\ncv = 2\nrate = 9\nduration_s = 60\n[lengths]\ninput_tokens = 300\noutput_tokens = 40\nprefix_tokens = 100\nprefix_groups = 3\n",
		"name = \"r\"\nkind = \"open\"\n[open]\nprocess = \"poisson\"\nramp = [{at_s = 0, rate = 1}, {at_s = 30, rate = 8}]\n[lengths]\ninput_tokens = 30\noutput_tokens = 4\n",
	} {
		s, err := Parse([]byte(text), "w.toml")
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.Requests(7)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Stream(7)
		if err != nil {
			t.Fatal(err)
		}
		var got []Request
		for q, ok := st.Next(); ok; q, ok = st.Next() {
			got = append(got, q)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: streamed %d requests, listed %d, or they differ", s.Name, len(got), len(want))
		}
	}
}
