`default_nettype none
// event_log: a ring of the last DEPTH events a harness saw, for its testbench to read after the
// fact instead of a Python callback per cycle (verif/kit/bfm.py, verif/blocks/block_tb.py).
//
// At each rising edge with `valid` high (exactly high: an X or Z strobe logs nothing), `entry`
// goes to log[count % DEPTH] and `count` (free-running from reset) counts every event ever
// logged; a reader that knows how many it has read takes the new ones from the ring and can tell
// when more arrived than the ring keeps. What an entry holds is the harness's choice (a write's
// cycle, address and data; an instruction's cycle and pc), documented where it is instantiated.
module event_log #(
    parameter ENTRY_W = 48,     // bits of one entry
    parameter DEPTH   = 1024    // entries kept
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               valid,
    input  wire [ENTRY_W-1:0] entry,
    output reg  [31:0]        count
);

reg [ENTRY_W-1:0] log [0:DEPTH-1];

always @(posedge clk) begin
    if (rst) begin
        count <= 32'd0;
    end else if (valid === 1'b1) begin
        log[count % DEPTH] <= entry;
        count <= count + 32'd1;
    end
end

endmodule

`default_nettype wire

`ifdef VERILATOR
// The ring and its count are read through VPI (builds without a global --public-flat-rw).
`verilator_config
public_flat_rw -module "event_log" -var "log"
public_flat_rw -module "event_log" -var "count"
`endif
