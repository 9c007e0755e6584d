package tus

import (
	"testing"
)

// recordSegments counts the segments of u that are records.
func recordSegments(u *Upload) int {
	n := 0
	for _, s := range u.Segments {
		if s.Part == nil {
			n++
		}
	}
	return n
}

// TestStaged runs the protocol's tests with uploads staged where their
// object will live (storage.MemStager, which checks the parts' order and
// minimum size and the SHA-256 the upload kept against the bytes), with a
// part minimum of 16 bytes below the tests' segment sizes, so short
// chunks become records merged into the next part.
func TestStaged(t *testing.T) {
	fixtureStaged = 16
	defer func() { fixtureStaged = 0 }()
	for name, test := range map[string]func(*testing.T){
		"UploadInChunks": TestUploadInChunks, "ResumeAfterCut": TestResumeAfterCut, "ErrorStatuses": TestErrorStatuses,
		"Checksums": TestChecksums, "TerminationAndExpiry": TestTerminationAndExpiry, "DeferLength": TestDeferLength,
		"CreationWithUpload": TestCreationWithUpload, "EmptyUpload": TestEmptyUpload, "Concatenation": TestConcatenation,
		"SameOffsetRace": TestSameOffsetRace, "CompleteRefused": TestCompleteRefused, "Sweep": TestSweep,
		"CommitAnswerLost": TestCommitAnswerLost, "CompleteFailsThenRetried": TestCompleteFailsThenRetried,
		"CutAnswers": TestCutAnswers,
	} {
		t.Run(name, test)
	}
}
