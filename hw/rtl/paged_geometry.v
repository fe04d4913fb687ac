`default_nettype none
`include "chip_defs.vh"
// paged_geometry: what a paged instruction's fields imply (hw/ISA.md, "Paged instructions";
// model.chip.isa.paged_geometry is the same rule in Python). Combinational. The chip has one
// instance, in the controller: it checks an instruction with it, and hands the paged DMA (pdma.v)
// the sizes it sequences with (the controller's pg_ outputs).
//
//   P           = 2^page_shift rows per page
//   words       = len * row_words                       the words moved
//   first_entry = row >> page_shift                     j_lo (PCOPY: 0)
//   entries     = ((P-1 + row + len-1) >> page_shift) - j_lo + 1      E (PCOPY: 1)
//   table_span  = 1 + first_entry + entries             table words from a, header included
//   pool_words  = pages * P * row_words
//   size_bad    = hw/ISA.md's BAD_SIZE rule for the paged instructions
//
// With page_shift > PAGE_SHIFT_MAX or a zero size the other outputs are meaningless; size_bad is
// set and the controller checks sizes before addresses.
module paged_geometry (
    input  wire        copy,          // the instruction is PCOPY (else PLOAD or PSTORE)
    input  wire [7:0]  row_words,
    input  wire [15:0] len,
    input  wire [7:0]  page_shift,
    input  wire [15:0] row,
    input  wire [15:0] pages,

    output wire [15:0] page_rows,     // P
    output wire [23:0] words,
    output wire [15:0] first_entry,
    output wire [31:0] entries,
    output wire [31:0] table_span,
    output wire [47:0] pool_words,
    output wire        size_bad
);

wire [3:0]  sh       = page_shift[3:0];    // meaningful when page_shift <= PAGE_SHIFT_MAX
wire [31:0] row_32   = {16'd0, row};
wire [31:0] len_32   = {16'd0, len};
wire [31:0] p_32     = 32'd1 << sh;
wire [31:0] last_pos = (p_32 - 32'd1) + row_32 + len_32 - 32'd1;   // the last row, first = P-1
wire [31:0] j_lo     = row_32 >> sh;
wire [31:0] j_hi     = last_pos >> sh;

assign page_rows   = p_32[15:0];
assign words       = {8'd0, len} * {16'd0, row_words};
assign first_entry = copy ? 16'd0 : j_lo[15:0];
assign entries     = copy ? 32'd1 : (j_hi - j_lo + 32'd1);
assign table_span  = 32'd1 + {16'd0, first_entry} + entries;
assign pool_words  = {32'd0, pages} * ({40'd0, row_words} << sh);

wire zero_size = (row_words == 8'd0) || (len == 16'd0) || (pages == 16'd0);
wire shift_bad = (page_shift > `PAGE_SHIFT_MAX);
wire span_bad  = copy ? ((row_32 + len_32) > p_32) : (entries > `PT_ENTRIES);

assign size_bad = zero_size || shift_bad || span_bad;

endmodule

`default_nettype wire
