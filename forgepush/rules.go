package forgepush

import (
	"fmt"
	"strings"
)

// DefaultBranch is the pattern word for the repository's default branch,
// which the gate learns from the forge for each push.
const DefaultBranch = "HEAD"

// Pattern is one ref pattern of the admin's: a ref name in which each *
// stands for any run of characters, "/" included (as in a refspec), or
// DefaultBranch; led by "!", it takes the refs it matches away from a
// list.
type Pattern struct {
	not  bool
	glob string
}

// ParsePattern reads one pattern as the conf writes it: [!]refs/... with
// any number of *, or [!]HEAD.
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{}
	p.glob, p.not = strings.CutPrefix(s, "!")
	if p.glob == DefaultBranch {
		return p, nil
	}
	// A * may stand for several levels: refs/* is every ref.
	if why := badRefName(strings.ReplaceAll(p.glob, "*", "x/x")); why != "" {
		return Pattern{}, fmt.Errorf("%q is neither HEAD nor a ref pattern such as refs/heads/claude/* (%s)", s, why)
	}
	return p, nil
}

func (p Pattern) String() string {
	if p.not {
		return "!" + p.glob
	}
	return p.glob
}

// matches says whether ref is what the pattern names; head is the
// repository's default branch as a ref, "" when the forge named none. A
// pattern led by "!" matches in any case: a forge that keeps refs as files
// on a case-insensitive file system reads refs/heads/MAIN as
// refs/heads/main, so what the admin takes away is taken away in every
// spelling; what the admin allows is allowed only as written.
func (p Pattern) matches(ref, head string) bool {
	if p.not {
		ref, head = strings.ToLower(ref), strings.ToLower(head)
		p.glob = strings.ToLower(p.glob)
		if p.glob == strings.ToLower(DefaultBranch) {
			p.glob = DefaultBranch
		}
	}
	if p.glob == DefaultBranch {
		return head != "" && ref == head
	}
	return globMatch(p.glob, ref)
}

// globMatch matches a pattern whose only special character is *, which
// stands for any run of characters.
func globMatch(glob, s string) bool {
	parts := strings.Split(glob, "*")
	if len(parts) == 1 {
		return glob == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	last := parts[len(parts)-1]
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// List is a list of patterns: a ref is in it when a pattern without "!"
// matches it and none with "!" does.
type List []Pattern

// ParseList reads the patterns of one conf key, in order.
func ParseList(lines []string) (List, error) {
	var l List
	for _, s := range lines {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		l = append(l, p)
	}
	return l, nil
}

// everyBranchButTheDefault is the default of Rules.Update and Rules.Force.
var everyBranchButTheDefault = List{{glob: "refs/heads/*"}, {not: true, glob: DefaultBranch}}

// has says whether ref is in the list. A list that names the default
// branch holds nothing when the forge named none (head ""): the gate
// cannot tell which ref it takes away.
func (l List) has(ref, head string) bool {
	if head == "" && l.namesDefault() {
		return false
	}
	in := false
	for _, p := range l {
		if p.matches(ref, head) {
			if p.not {
				return false
			}
			in = true
		}
	}
	return in
}

// namesDefault says whether deciding by the list needs the default branch.
func (l List) namesDefault() bool {
	for _, p := range l {
		if p.glob == DefaultBranch {
			return true
		}
	}
	return false
}

func (l List) String() string {
	s := make([]string, len(l))
	for i, p := range l {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// Rules are the admin's rules on what a push to a forge may change. A nil
// Update or Force list is everyBranchButTheDefault; a nil Delete list
// lets no ref be deleted.
type Rules struct {
	Update List // refs a push may create or update (conf push-ref)
	Delete List // refs a push may delete (conf push-delete)
	Force  List // refs a push may update to a commit that does not descend from the old one (conf push-force)
}

func (r Rules) update() List { return orDefault(r.Update) }
func (r Rules) force() List  { return orDefault(r.Force) }

func orDefault(l List) List {
	if l == nil {
		return everyBranchButTheDefault
	}
	return l
}

// verdict is the gate's decision on one command: refused with why, or let
// through, after a fast-forward check when ancestry is set.
type verdict struct {
	why      string
	ancestry bool
}

// decide decides one command by the rules alone; head is the default
// branch as a ref, "" when the forge named none. The reasons name the conf
// key that would let the command through.
func (r Rules) decide(c Command, head string) verdict {
	switch {
	case c.deletes():
		if !r.Delete.has(c.Ref, head) {
			return verdict{why: "deletion not in push-delete" + unknownHead(r.Delete, head)}
		}
	case !r.update().has(c.Ref, head):
		if head != "" && strings.EqualFold(c.Ref, head) {
			return verdict{why: "the repository's default branch is not in push-ref"}
		}
		return verdict{why: "not in push-ref (" + r.update().String() + ")" + unknownHead(r.update(), head)}
	case !c.creates() && !r.force().has(c.Ref, head):
		return verdict{ancestry: true}
	}
	return verdict{}
}

// needsDefault says whether deciding c needs the default branch: a list
// the decision reads names it.
func (r Rules) needsDefault(c Command) bool {
	if c.deletes() {
		return r.Delete.namesDefault()
	}
	return r.update().namesDefault() || (!c.creates() && r.force().namesDefault())
}

// unknownHead adds, to a refusal by a list that names the default branch
// when the forge named none, that the gate could not tell.
func unknownHead(l List, head string) string {
	if head == "" && l.namesDefault() {
		return "; the forge names no default branch"
	}
	return ""
}
