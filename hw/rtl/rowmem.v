`default_nettype none
// rowmem: a small memory with a synchronous write port and a combinational read port
// (distributed RAM). The softmax unit keeps e[i] in one; the matrix unit's tile buffers are
// ARRAY_N of them for the rows of A and ARRAY_N for the columns of B.
//
// The words power up to zero, so no unknown value can leak out of an unwritten entry.
module rowmem #(
    parameter WIDTH  = 16,                // bits per word
    parameter DEPTH  = 256,               // number of words
    parameter ADDR_W = $clog2(DEPTH)      // address width (leave at the default)
) (
    input  wire              clk,

    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [WIDTH-1:0]  wr_data,

    input  wire [ADDR_W-1:0] rd_addr,
    output wire [WIDTH-1:0]  rd_data
`ifdef FORMAL    // every word, for a user's invariants (hw/formal/pdma_invariants.vh)
    , output wire [WIDTH*DEPTH-1:0] f_words
`endif
);

`ifdef FORMAL
(* mem2reg *)    // f_words reads every word: as registers they cost the solver less
`endif
reg [WIDTH-1:0] mem [0:DEPTH-1];

integer i;

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    if (ADDR_W != $clog2(DEPTH) || DEPTH < 2 || WIDTH < 1) begin
        $display("rowmem: bad parameters WIDTH=%0d DEPTH=%0d ADDR_W=%0d", WIDTH, DEPTH, ADDR_W);
        $finish;
    end
    /* verilator coverage_on */
    for (i = 0; i < DEPTH; i = i + 1) begin
        mem[i] = {WIDTH{1'b0}};
    end
end

always @(posedge clk) begin
    if (wr_en) begin
        mem[wr_addr] <= wr_data;
    end
end

assign rd_data = mem[rd_addr];

`ifdef FORMAL
genvar f_i;
for (f_i = 0; f_i < DEPTH; f_i = f_i + 1) begin : g_f_words
    assign f_words[WIDTH*f_i +: WIDTH] = mem[f_i];
end
`endif

endmodule

`default_nettype wire
