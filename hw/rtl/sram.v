`default_nettype none
`include "chip_defs.vh"
// sram: the on-chip scratchpad, SRAM_WORDS x 32 bits.
//
// Two synchronous read ports (data one cycle after the address) and one write port. A read of
// the word written in the same cycle returns the old word (read-first). The units read element
// i+1 in the cycle they write element i, so an in-place VADD (c == a) reads every element
// before it is overwritten.
//
// Port A is LANES words wide: lane i holds word rd_a_addr + i (0 past the last word), so the
// matrix unit reads ARRAY_N consecutive words a cycle; every other unit uses lane 0. (On
// silicon: LANES banks interleaved by address, word w in bank w mod LANES, each read once per
// cycle.)
//
// The array powers up to zero (an FPGA block RAM's initial contents); neither rst nor start
// clears it, so the scratchpad keeps its words from one run to the next.
//
// With PARITY, each word has a parity bit beside it (written with the word: the XOR of its
// bits), and each read port reports, with its data, whether a word it read fails the check
// (hw/ISA.md, "CORRUPTION"): port A over its lanes inside the array, port B its one word.
module sram #(
    parameter SRAM_WORDS = `SRAM_WORDS_DEFAULT,  // number of 32-bit words
    parameter LANES      = 1,                    // port A's width in words
    parameter PARITY     = `DETECTION_DEFAULT,   // 1: a parity bit per word, checked on reads
    parameter ADDR_W     = $clog2(SRAM_WORDS)    // address width (leave at the default)
) (
    input  wire              clk,

    // read port A
    input  wire [ADDR_W-1:0]   rd_a_addr,
    output reg  [32*LANES-1:0] rd_a_data,    // lane i: word rd_a_addr + i
    output wire                rd_a_bad,     // with rd_a_data: a lane's word failed its parity

    // read port B
    input  wire [ADDR_W-1:0] rd_b_addr,
    output reg  [31:0]       rd_b_data,
    output wire              rd_b_bad,       // with rd_b_data: its word failed its parity

    // write port
    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [31:0]       wr_data
);

reg [31:0] mem [0:SRAM_WORDS-1];

integer i;

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    `CHECK_RANGE("SRAM_WORDS", SRAM_WORDS, `SRAM_WORDS_LO, `SRAM_WORDS_HI)
    `CHECK_RANGE("ADDR_W", ADDR_W, $clog2(SRAM_WORDS), $clog2(SRAM_WORDS))
    `CHECK_RANGE("LANES", LANES, 1, `ARRAY_N_HI)
    `CHECK_RANGE("PARITY", PARITY, 0, 1)
    /* verilator coverage_on */
    for (i = 0; i < SRAM_WORDS; i = i + 1) begin
        mem[i] = 32'd0;
    end
    rd_a_data = {(32*LANES){1'b0}};
    rd_b_data = 32'd0;
end

// one block per lane, its offset a constant (on Icarus a loop's index and bounds cost every cycle)
wire [LANES-1:0]        lane_inside;    // lane i's word lies inside the array
wire [ADDR_W*LANES-1:0] lane_word;      // lane i's word's address, at [ADDR_W*i +: ADDR_W]
genvar lane;
generate
    for (lane = 0; lane < LANES; lane = lane + 1) begin : g_lane
        localparam [31:0] OFFSET = lane;
        wire [31:0] addr = {{(32-ADDR_W){1'b0}}, rd_a_addr} + OFFSET;
        assign lane_inside[lane] = addr < SRAM_WORDS;
        assign lane_word[ADDR_W*lane +: ADDR_W] = addr[ADDR_W-1:0];
        always @(posedge clk) begin
            rd_a_data[32*lane +: 32] <= lane_inside[lane] ? mem[lane_word[ADDR_W*lane +: ADDR_W]]
                                                          : 32'd0;
        end
    end
endgenerate

always @(posedge clk) begin
    rd_b_data <= mem[rd_b_addr];
    if (wr_en) begin
        mem[wr_addr] <= wr_data;
    end
end

// the parity bits: a second array beside the words, and one check per read lane
generate
    if (PARITY) begin : g_parity
        reg            par [0:SRAM_WORDS-1];    // word i's parity: ^mem[i]
        reg [LANES-1:0] a_bad;                  // port A's lanes that failed, with rd_a_data
        reg            b_bad;                   // port B's word failed, with rd_b_data

        initial begin
            for (i = 0; i < SRAM_WORDS; i = i + 1) begin
                par[i] = 1'b0;                  // the parity of a zero word
            end
            a_bad = {LANES{1'b0}};
            b_bad = 1'b0;
        end

        for (lane = 0; lane < LANES; lane = lane + 1) begin : g_check
            wire [ADDR_W-1:0] word = lane_word[ADDR_W*lane +: ADDR_W];
            always @(posedge clk) begin
                a_bad[lane] <= lane_inside[lane] && ((^mem[word]) != par[word]);
            end
        end

        always @(posedge clk) begin
            b_bad <= (^mem[rd_b_addr]) != par[rd_b_addr];
            if (wr_en) begin
                par[wr_addr] <= ^wr_data;
            end
        end

        assign rd_a_bad = |a_bad;
        assign rd_b_bad = b_bad;
    end else begin : g_no_parity
        assign rd_a_bad = 1'b0;
        assign rd_b_bad = 1'b0;
    end
endgenerate

endmodule

`default_nettype wire
