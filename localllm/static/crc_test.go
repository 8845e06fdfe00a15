package static_test

import (
	"encoding/binary"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func binaryCRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// binaryAppendCRC appends the little-endian CRC-32C of b.
func binaryAppendCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, binaryCRC(b))
}
