`default_nettype none
// write_log: the log of one memory write port, kept in an event_log ring for the testbench to
// read after a command (verif/kit/write_log.py), so that a wrong word can be named with the
// cycle it was written in, without a Python callback per cycle.
//
// Each write (`we` exactly high at a rising edge: the edge the memory stores it at) logs
//     {cycle[31:0], address[15:0], data[31:0]}      (80 bits, most significant first)
// where `cycle` counts from 0 in the cycle after the last `start` (the edge that samples a
// command strobe; the cycle verif/tests/blocks/command.py's run_command calls cycle 0), and the
// address is zero-extended to 16 bits. The ring keeps the last DEPTH writes; its count
// (u_log.count) numbers every write since reset.
module write_log #(
    parameter ADDR_W = 16,      // the port's address bits, at most 16
    parameter DEPTH  = 1024     // writes kept: at least the most one command makes
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              start,    // a command strobe: the next cycle is cycle 0
    input  wire              we,
    input  wire [ADDR_W-1:0] addr,
    input  wire [31:0]       data
);

initial begin
    if (ADDR_W < 1 || ADDR_W > 16) begin
        $display("write_log: ADDR_W = %0d, must be 1 .. 16", ADDR_W);
        $finish;
    end
end

reg  [31:0] cycle_reg;    // cycles since the last start (0 in the cycle after it)
wire [31:0] addr_wide = {{(32 - ADDR_W){1'b0}}, addr};
wire [31:0] unused_count;

always @(posedge clk) begin
    if (rst || start) begin
        cycle_reg <= 32'd0;
    end else begin
        cycle_reg <= cycle_reg + 32'd1;
    end
end

event_log #(
    .STAMP_W (32),
    .DATA_W  (48),
    .DEPTH   (DEPTH)
) u_log (
    .clk   (clk),
    .rst   (rst),
    .valid (we),
    .stamp (cycle_reg),
    .data  ({addr_wide[15:0], data}),
    .count (unused_count)
);

wire unused_write_log = &{1'b0, addr_wide[31:16], unused_count};

endmodule

`default_nettype wire
