`default_nettype none
`include "chip_defs.vh"
// tile_buffer: one tile buffer of the matrix unit, a row of A or a column of B: DEPTH int8
// entries, up to LANES consecutive ones written a cycle (synchronous), one read combinationally
// (distributed RAM). A wide SRAM read fills LANES entries of one buffer at once (an A row, a
// transposed B's column), or one entry of each of LANES buffers (a row-major B's tile row).
//
// The entries power up to zero, so no unknown value can leak out of an unwritten one. Lane i
// writes entry wr_addr + i when wr_lanes[i] is set; the matrix unit never enables a lane past
// the reduction length k <= DEPTH.
module tile_buffer #(
    parameter LANES  = `ARRAY_N_DEFAULT,    // entries written a cycle, at most
    parameter DEPTH  = `K_MAX_DEFAULT,      // entries: the longest reduction
    parameter ADDR_W = $clog2(DEPTH)        // address width (leave at the default)
) (
    input  wire               clk,

    input  wire [LANES-1:0]   wr_lanes,     // lane i writes entry wr_addr + i
    input  wire [ADDR_W-1:0]  wr_addr,
    input  wire [8*LANES-1:0] wr_data,      // lane i: [8*i +: 8]

    input  wire [ADDR_W-1:0]  rd_addr,
    output wire [7:0]         rd_data
);

reg [7:0] mem [0:DEPTH-1];

integer i;

initial begin
    /* verilator coverage_off */    // parameter checks: only a bad parameter reaches their $finish
    if (ADDR_W != $clog2(DEPTH) || DEPTH < 2 || LANES < 1) begin
        $display("tile_buffer: bad parameters LANES=%0d DEPTH=%0d ADDR_W=%0d", LANES, DEPTH,
                 ADDR_W);
        $finish;
    end
    /* verilator coverage_on */
    for (i = 0; i < DEPTH; i = i + 1) begin
        mem[i] = 8'd0;
    end
end

always @(posedge clk) begin
    if (wr_lanes != {LANES{1'b0}}) begin
        for (i = 0; i < LANES; i = i + 1) begin
            if (wr_lanes[i]) begin
                mem[wr_addr + i[ADDR_W-1:0]] <= wr_data[8*i +: 8];
            end
        end
    end
end

assign rd_data = mem[rd_addr];

endmodule

`default_nettype wire
